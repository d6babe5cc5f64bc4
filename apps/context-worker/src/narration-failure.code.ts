import { NARRATION_FAILURE_MESSAGES, type NarrationFailureCode } from '@chronicle/adventure';
import { isModelError, MODEL_ERROR_CODES, ModelError, type ModelErrorKind } from '@chronicle/llm';

/**
 * The stable code of a model failure (libs/llm's table, which the metrics count by too), typed
 * here as the codes NarrationFailed may record.
 */
export const FAILURE_CODE_OF_KIND: Readonly<Record<ModelErrorKind, NarrationFailureCode>> =
  MODEL_ERROR_CODES;

/** Why a turn failed, as recorded in NarrationFailed and sent in the stream's `error` frame. */
export interface TurnFailure {
  code: NarrationFailureCode;
  message: string;
}

const ONLY_BLOCK =
  'The model replied with only a state block and no story text. It will be tried again; if it keeps happening, raise the maximum output tokens or try another model.';

/** The model replied, but with nothing a player can read: worth another attempt. */
export function onlyBlockError(): ModelError {
  return new ModelError({
    kind: 'bad_request',
    retryable: true,
    message: ONLY_BLOCK,
    playerMessage: ONLY_BLOCK,
  });
}

/**
 * The code and message of a final failure: a model error's player-facing message (the
 * operator's details stay in the log), the code's own for anything else.
 */
export function failureOf(error: unknown): TurnFailure {
  if (isModelError(error)) {
    return { code: FAILURE_CODE_OF_KIND[error.kind], message: error.playerMessage };
  }
  return { code: 'internal', message: NARRATION_FAILURE_MESSAGES.internal };
}
