import { NARRATION_FAILURE_MESSAGES, type NarrationFailureCode } from '@chronicle/adventure';
import { isModelError, ModelError, type ModelErrorKind } from '@chronicle/llm';

/**
 * The stable code of a model failure. A provider's 5xx is `model_unreachable`: to the player it
 * is the same as a provider that cannot be reached (try again in a moment).
 */
export const FAILURE_CODE_OF_KIND: Readonly<Record<ModelErrorKind, NarrationFailureCode>> = {
  auth: 'model_unauthorized',
  not_found: 'model_not_found',
  rate_limited: 'model_rate_limited',
  unreachable: 'model_unreachable',
  timeout: 'model_timeout',
  server: 'model_unreachable',
  bad_request: 'model_bad_request',
  cut: 'model_stream_broken',
  cancelled: 'cancelled',
};

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
