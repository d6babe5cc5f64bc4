import type { NarrationFailureCode } from '@chronicle/adventure';
import { MODEL_ERROR_CODES, type ModelErrorKind } from '@chronicle/llm';

/**
 * The stable code of a model failure (libs/llm's table, which the metrics count by too), typed
 * here as the codes NarrationFailed may record.
 */
export const FAILURE_CODE_OF_KIND: Readonly<Record<ModelErrorKind, NarrationFailureCode>> =
  MODEL_ERROR_CODES;
