// What happened to a turn, read off what a step threw: the facts the turn workflow
// (libs/adventure/src/turn.workflow.ts) decides on. Only the reading is here; every rule about
// what to do next is the workflow's.
import { TurnNotInFlightError, type TurnFact } from '@chronicle/adventure';
import { isModelError, MODEL_ERROR_CODES, ModelError } from '@chronicle/llm';
import { asDependencyUnavailable, TurnCancelledSignal } from '@chronicle/platform';
import type { Fence } from './reply.stream';

/** A model error as the workflow's fact: its kind's stable code, Retry-After, the player's words. */
export function modelFailed(error: ModelError): Extract<TurnFact, { type: 'ModelFailed' }> {
  return {
    type: 'ModelFailed',
    code: MODEL_ERROR_CODES[error.kind],
    retryable: error.retryable,
    ...(error.retryAfterMs !== undefined && { retryAfterMs: error.retryAfterMs }),
    message: error.playerMessage,
  };
}

/**
 * The fact behind an error a narrate attempt threw, asked in this order: the turn ended
 * elsewhere, the worker is stopping, the attempt lost its fence, then what failed.
 */
export function factOfError(error: unknown, signal: AbortSignal, fence: Fence): TurnFact {
  if (error instanceof TurnNotInFlightError || signal.reason instanceof TurnCancelledSignal) {
    return { type: 'Cancelled' };
  }
  if (signal.aborted) return { type: 'ShuttingDown' };
  if (fence.isOut) return { type: 'FencedOut' };
  if (isModelError(error)) return modelFailed(error);
  if (asDependencyUnavailable(error)) return { type: 'DependencyDown' };
  return { type: 'StepFailed' };
}
