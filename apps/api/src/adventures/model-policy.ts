import { UnprocessableError } from '@chronicle/adventure';
import { allowedModels, type AppConfig } from '@chronicle/platform';

/**
 * An adventure's settings.model may name only what the installation offers (MODEL_ALLOWED, or
 * MODEL_NAME alone): the operator pays for the calls. Empty means the default, always allowed.
 */
export function assertModelAllowed(
  model: string | undefined,
  config: Pick<AppConfig, 'modelAllowed' | 'modelName'>,
  field = 'settings.model',
): void {
  if (model === undefined || model === '') return;
  const allowed = allowedModels(config);
  if (allowed.includes(model)) return;
  throw new UnprocessableError(
    `${field} "${model.slice(0, 100)}" is not offered on this installation; choose one of ${allowed
      .map((name) => `"${name}"`)
      .join(', ')}, or leave it empty for the default`,
  );
}
