// The turn's retry, deferral and failure rules, in one pure function: given what happened to a
// turn's narration (a fact), what the worker does next (steps). The narrate processor, the use
// case and the reconciler interpret the steps; none of them decides a rule of its own. Modelled
// on emmett's Workflow: facts in, commands out, no I/O.

import { NARRATION_FAILURE_MESSAGES, type NarrationFailureCode } from './narration-failure';

/** What the workflow knows of the turn's run: its attempt and the limits configured. */
export interface TurnRun {
  /** 1 on the first run, as the queue counts attempts (a stalled re-run keeps its number). */
  attempt: number;
  /** The attempts the job has; the last one records the failure instead of retrying. */
  maxAttempts: number;
  /** NARRATE_TURN_DEADLINE_MS: a turn in flight longer is given up. */
  deadlineMs: number;
  /** RECONCILE_MAX_REQUEUES: a turn whose job was put back this often is given up. */
  maxRequeues: number;
}

/** What happened to the turn. */
export type TurnFact =
  /** A narrate job started; `inFlight` is whether the turn is still the adventure's in flight. */
  | { type: 'JobStarted'; inFlight: boolean }
  /** The model replied; `blank` when it gave no prose and no Output script chose the blank. */
  | { type: 'ModelReplied'; blank: boolean }
  /**
   * The model call failed: `code` is its kind's failure code, `retryable` whether another try
   * may mend it, `retryAfterMs` the provider's Retry-After, `message` the player's words.
   */
  | {
      type: 'ModelFailed';
      code: NarrationFailureCode;
      retryable: boolean;
      retryAfterMs?: number;
      message: string;
    }
  /** Something other than the model failed (a bug, an unknown error): retried like a model error. */
  | { type: 'StepFailed' }
  /** Postgres or Redis cannot answer. */
  | { type: 'DependencyDown' }
  /** The worker is shutting down mid-turn. */
  | { type: 'ShuttingDown' }
  /** The owner's daily token budget is spent (asked before the model is called). */
  | { type: 'BudgetSpent' }
  /** This attempt lost its job's lock: another attempt has the turn now. */
  | { type: 'FencedOut' }
  /** The turn was cancelled, or finished by someone else, while this attempt worked. */
  | { type: 'Cancelled' }
  /** The queue gave the job up by itself (it stalled too often, or threw on its last attempt). */
  | { type: 'QueueGaveUp'; attemptsMade: number }
  /** The reconciler's pass found the turn in flight this long, its job put back `requeues` times. */
  | { type: 'Reconciled'; ageMs: number; requeues: number }
  /** The reconciler found the turn's job gone, failed or stuck, after `requeues` put-backs. */
  | { type: 'JobNotRunning'; requeues: number }
  /** A final failure could not be recorded yet (Postgres unreachable); `tries` so far. */
  | { type: 'FailureNotRecorded'; tries: number };

export type IgnoreReason = 'not-in-flight' | 'cancelled' | 'fenced';

/** What the worker does next. */
export type TurnStep =
  /** Go on with the turn: build the prompt and call the model. */
  | { type: 'Narrate' }
  | { type: 'RecordNarration' }
  | { type: 'RecordFailure'; code: NarrationFailureCode; message: string; attempts: number }
  /**
   * Run the job again after `afterMs` (null: the queue's own backoff). `countsAttempt` false
   * when the turn is not at fault (a wait, a release, an outage): no attempt is spent.
   */
  | { type: 'Retry'; afterMs: number | null; countsAttempt: boolean; reason: string }
  /** Put the turn's job back in the queue (the reconciler's repair); counts one requeue. */
  | { type: 'Requeue' }
  /** Try recording the failure again after `afterMs`. */
  | { type: 'RecordFailureAgain'; afterMs: number }
  | { type: 'Ignore'; reason: IgnoreReason };

/** How long a turn waits for an unreachable Postgres or Redis before it runs again. */
export const DEPENDENCY_DOWN_WAIT_MS = 2_000;
/** A 429 without Retry-After pauses the provider this long. */
export const DEFAULT_PROVIDER_PAUSE_MS = 5_000;
/** The longest pause honoured: a longer Retry-After is a cap, not a burst limit. */
const MAX_PROVIDER_PAUSE_MS = 10 * 60_000;
/** Backoff of a final failure that cannot be recorded yet: 0.5 s doubling up to 10 s. */
const RECORD_AGAIN_FIRST_MS = 500;
const RECORD_AGAIN_MAX_MS = 10_000;

/** The reply had only a state block: worth another attempt, and the player's words if not. */
export const ONLY_BLOCK_MESSAGE =
  'The model replied with only a state block and no story text. It will be tried again; if it keeps happening, raise the maximum output tokens or try another model.';

/** A lost job's message says why it was lost. */
const QUEUE_GAVE_UP_MESSAGE = `${NARRATION_FAILURE_MESSAGES.lost} (The worker running it stopped too many times.)`;

/**
 * How long a 429 that is a burst limit (retryable; a used-up quota is not) pauses every
 * narration to the provider: its Retry-After, 5 s without one, at most 10 minutes.
 */
export function pauseMsOfRetryAfter(retryAfterMs: number | undefined): number {
  const ms =
    typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs > 0
      ? retryAfterMs
      : DEFAULT_PROVIDER_PAUSE_MS;
  return Math.min(Math.round(ms), MAX_PROVIDER_PAUSE_MS);
}

/** Whether a model failure is a burst limit every worker waits out together. */
export function pausesTheProvider(fact: Extract<TurnFact, { type: 'ModelFailed' }>): boolean {
  return fact.code === 'model_rate_limited' && fact.retryable;
}

function fail(code: NarrationFailureCode, attempts: number, message?: string): TurnStep[] {
  return [
    {
      type: 'RecordFailure',
      code,
      message: message ?? NARRATION_FAILURE_MESSAGES[code],
      attempts: Math.max(1, attempts),
    },
  ];
}

/** A failed attempt: another one while attempts are left and a retry may mend it, else the end. */
function attemptFailed(
  run: TurnRun,
  failure: {
    code: NarrationFailureCode;
    retryable: boolean;
    retryAfterMs?: number;
    message: string;
  },
): TurnStep[] {
  if (failure.retryable && run.attempt < run.maxAttempts) {
    return [
      {
        type: 'Retry',
        afterMs: failure.retryAfterMs ?? null,
        countsAttempt: true,
        reason: `attempt ${run.attempt} of ${run.maxAttempts} failed (${failure.code})`,
      },
    ];
  }
  return fail(failure.code, run.attempt, failure.message);
}

/** What to do about `fact`, given the turn's run. Pure: the same fact always asks the same. */
export function decideTurnStep(run: TurnRun, fact: TurnFact): TurnStep[] {
  switch (fact.type) {
    case 'JobStarted':
      return fact.inFlight ? [{ type: 'Narrate' }] : [{ type: 'Ignore', reason: 'not-in-flight' }];
    case 'ModelReplied':
      return fact.blank
        ? attemptFailed(run, {
            code: 'model_bad_request',
            retryable: true,
            message: ONLY_BLOCK_MESSAGE,
          })
        : [{ type: 'RecordNarration' }];
    case 'ModelFailed':
      // A 429 paused every worker's narrations to the provider: this turn waits with them,
      // spending no attempt, rather than retrying on its own.
      if (pausesTheProvider(fact)) {
        return [
          {
            type: 'Retry',
            afterMs: pauseMsOfRetryAfter(fact.retryAfterMs),
            countsAttempt: false,
            reason: 'the model provider asked to wait (429)',
          },
        ];
      }
      return attemptFailed(run, fact);
    case 'StepFailed':
      return attemptFailed(run, {
        code: 'internal',
        retryable: true,
        message: NARRATION_FAILURE_MESSAGES.internal,
      });
    case 'DependencyDown':
      // The turn is not at fault; NARRATE_TURN_DEADLINE_MS bounds how long it may wait.
      return [
        {
          type: 'Retry',
          afterMs: DEPENDENCY_DOWN_WAIT_MS,
          countsAttempt: false,
          reason: 'a dependency is unreachable',
        },
      ];
    case 'ShuttingDown':
      return [
        {
          type: 'Retry',
          afterMs: 0,
          countsAttempt: false,
          reason: 'the worker is shutting down',
        },
      ];
    case 'BudgetSpent':
      // No retry: the budget resets at midnight UTC, not in seconds.
      return fail('budget', run.attempt);
    case 'FencedOut':
      // A failure here is the attempt's that claimed the turn, to retry or record.
      return [{ type: 'Ignore', reason: 'fenced' }];
    case 'Cancelled':
      // The API has recorded and announced the outcome.
      return [{ type: 'Ignore', reason: 'cancelled' }];
    case 'QueueGaveUp':
      return fail('lost', fact.attemptsMade, QUEUE_GAVE_UP_MESSAGE);
    case 'Reconciled':
      return fact.ageMs > run.deadlineMs ? fail('deadline', fact.requeues) : [];
    case 'JobNotRunning':
      return fact.requeues >= run.maxRequeues ? fail('lost', fact.requeues) : [{ type: 'Requeue' }];
    case 'FailureNotRecorded':
      return [
        {
          type: 'RecordFailureAgain',
          afterMs: Math.min(
            RECORD_AGAIN_FIRST_MS * 2 ** Math.max(0, fact.tries - 1),
            RECORD_AGAIN_MAX_MS,
          ),
        },
      ];
  }
}
