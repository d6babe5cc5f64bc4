import type { NarrationFailureCode } from '@chronicle/adventure';
import type { ModelErrorKind } from '@chronicle/llm';

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
