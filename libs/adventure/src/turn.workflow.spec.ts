import { NARRATION_FAILURE_MESSAGES } from './narration-failure';
import {
  decideTurnStep,
  DEFAULT_PROVIDER_PAUSE_MS,
  DEPENDENCY_DOWN_WAIT_MS,
  ONLY_BLOCK_MESSAGE,
  pauseMsOfRetryAfter,
  type TurnFact,
  type TurnRun,
} from './turn.workflow';

const run = (attempt: number, overrides: Partial<TurnRun> = {}): TurnRun => ({
  attempt,
  maxAttempts: 3,
  deadlineMs: 600_000,
  maxRequeues: 3,
  ...overrides,
});

const modelFailed = (overrides: Partial<Extract<TurnFact, { type: 'ModelFailed' }>> = {}) =>
  ({
    type: 'ModelFailed',
    code: 'model_timeout',
    retryable: true,
    message: 'The model took too long.',
    ...overrides,
  }) as const;

describe('decideTurnStep', () => {
  describe('given a job that starts', () => {
    it('when its turn is in flight, then it narrates', () => {
      expect(decideTurnStep(run(1), { type: 'JobStarted', inFlight: true })).toEqual([
        { type: 'Narrate' },
      ]);
    });

    it('when its turn is no longer in flight (a redelivery, a cancel), then it does nothing', () => {
      expect(decideTurnStep(run(2), { type: 'JobStarted', inFlight: false })).toEqual([
        { type: 'Ignore', reason: 'not-in-flight' },
      ]);
    });
  });

  describe('given the model replied', () => {
    it('when the reply has prose, then the narration is recorded', () => {
      expect(decideTurnStep(run(1), { type: 'ModelReplied', blank: false })).toEqual([
        { type: 'RecordNarration' },
      ]);
    });

    it('when it is blank before the last attempt, then the job runs again, counting the attempt', () => {
      expect(decideTurnStep(run(1), { type: 'ModelReplied', blank: true })).toEqual([
        expect.objectContaining({ type: 'Retry', afterMs: null, countsAttempt: true }),
      ]);
    });

    it('when it is blank on the last attempt, then the turn fails as a bad request, saying why', () => {
      expect(decideTurnStep(run(3), { type: 'ModelReplied', blank: true })).toEqual([
        {
          type: 'RecordFailure',
          code: 'model_bad_request',
          message: ONLY_BLOCK_MESSAGE,
          attempts: 3,
        },
      ]);
    });
  });

  describe('given the model failed', () => {
    it('when a retry may mend it and attempts are left, then the job runs again after the queue backoff, counting the attempt', () => {
      expect(decideTurnStep(run(2), modelFailed())).toEqual([
        {
          type: 'Retry',
          afterMs: null,
          countsAttempt: true,
          reason: 'attempt 2 of 3 failed (model_timeout)',
        },
      ]);
    });

    it('when the provider named a Retry-After on a retryable error, then the retry waits that long', () => {
      expect(
        decideTurnStep(run(1), modelFailed({ code: 'model_unreachable', retryAfterMs: 7_000 })),
      ).toEqual([expect.objectContaining({ type: 'Retry', afterMs: 7_000, countsAttempt: true })]);
    });

    it('when it is the last attempt, then the failure is recorded with its code and the player message', () => {
      expect(decideTurnStep(run(3), modelFailed())).toEqual([
        {
          type: 'RecordFailure',
          code: 'model_timeout',
          message: 'The model took too long.',
          attempts: 3,
        },
      ]);
    });

    it('when no retry can mend it (a refused key), then the failure is recorded at once', () => {
      expect(
        decideTurnStep(
          run(1),
          modelFailed({ code: 'model_unauthorized', retryable: false, message: 'key refused' }),
        ),
      ).toEqual([
        { type: 'RecordFailure', code: 'model_unauthorized', message: 'key refused', attempts: 1 },
      ]);
    });

    it('when it is a 429 burst limit, then the turn waits out the Retry-After with every other, spending no attempt, even on its last', () => {
      expect(
        decideTurnStep(run(3), modelFailed({ code: 'model_rate_limited', retryAfterMs: 1_500 })),
      ).toEqual([
        {
          type: 'Retry',
          afterMs: 1_500,
          countsAttempt: false,
          reason: 'the model provider asked to wait (429)',
        },
      ]);
    });

    it('when it is a 429 without Retry-After, then it waits the default pause', () => {
      expect(decideTurnStep(run(1), modelFailed({ code: 'model_rate_limited' }))).toEqual([
        expect.objectContaining({ afterMs: DEFAULT_PROVIDER_PAUSE_MS, countsAttempt: false }),
      ]);
    });

    it('when it is a used-up quota (a 429 no wait mends), then the failure is recorded', () => {
      expect(
        decideTurnStep(
          run(1),
          modelFailed({ code: 'model_rate_limited', retryable: false, message: 'quota' }),
        ),
      ).toEqual([
        { type: 'RecordFailure', code: 'model_rate_limited', message: 'quota', attempts: 1 },
      ]);
    });
  });

  describe('given something other than the model failed', () => {
    it('when attempts are left, then the job runs again, counting the attempt', () => {
      expect(decideTurnStep(run(1), { type: 'StepFailed' })).toEqual([
        expect.objectContaining({ type: 'Retry', afterMs: null, countsAttempt: true }),
      ]);
    });

    it('when it is the last attempt, then the turn fails as internal, with the plain message', () => {
      expect(decideTurnStep(run(3), { type: 'StepFailed' })).toEqual([
        {
          type: 'RecordFailure',
          code: 'internal',
          message: NARRATION_FAILURE_MESSAGES.internal,
          attempts: 3,
        },
      ]);
    });
  });

  describe('given the turn is not at fault', () => {
    it('when Postgres or Redis is down, then the job waits and runs again, spending no attempt', () => {
      expect(decideTurnStep(run(3), { type: 'DependencyDown' })).toEqual([
        {
          type: 'Retry',
          afterMs: DEPENDENCY_DOWN_WAIT_MS,
          countsAttempt: false,
          reason: 'a dependency is unreachable',
        },
      ]);
    });

    it('when the worker shuts down, then the job goes back at once for another worker, spending no attempt', () => {
      expect(decideTurnStep(run(2), { type: 'ShuttingDown' })).toEqual([
        expect.objectContaining({ type: 'Retry', afterMs: 0, countsAttempt: false }),
      ]);
    });
  });

  describe('given a turn that must not go on', () => {
    it('when the budget is spent, then the turn fails as budget, without a retry', () => {
      expect(decideTurnStep(run(1), { type: 'BudgetSpent' })).toEqual([
        {
          type: 'RecordFailure',
          code: 'budget',
          message: NARRATION_FAILURE_MESSAGES.budget,
          attempts: 1,
        },
      ]);
    });

    it('when this attempt was fenced out, then it leaves the turn to the attempt that claimed it', () => {
      expect(decideTurnStep(run(1), { type: 'FencedOut' })).toEqual([
        { type: 'Ignore', reason: 'fenced' },
      ]);
    });

    it('when the turn was cancelled meanwhile, then nothing is recorded', () => {
      expect(decideTurnStep(run(1), { type: 'Cancelled' })).toEqual([
        { type: 'Ignore', reason: 'cancelled' },
      ]);
    });

    it('when the queue gave the job up by itself, then the turn is recorded lost, saying why', () => {
      expect(decideTurnStep(run(1), { type: 'QueueGaveUp', attemptsMade: 3 })).toEqual([
        {
          type: 'RecordFailure',
          code: 'lost',
          message: `${NARRATION_FAILURE_MESSAGES.lost} (The worker running it stopped too many times.)`,
          attempts: 3,
        },
      ]);
    });
  });

  describe("given the reconciler's pass", () => {
    it('when the turn is in flight past its deadline, then it fails as deadline', () => {
      expect(decideTurnStep(run(1), { type: 'Reconciled', ageMs: 600_001, requeues: 2 })).toEqual([
        {
          type: 'RecordFailure',
          code: 'deadline',
          message: NARRATION_FAILURE_MESSAGES.deadline,
          attempts: 2,
        },
      ]);
    });

    it('when it is within its deadline, then the pass goes on to its job', () => {
      expect(decideTurnStep(run(1), { type: 'Reconciled', ageMs: 600_000, requeues: 0 })).toEqual(
        [],
      );
    });

    it('when its job is not running and requeues are left, then the job is put back', () => {
      expect(decideTurnStep(run(1), { type: 'JobNotRunning', requeues: 2 })).toEqual([
        { type: 'Requeue' },
      ]);
    });

    it('when its job was put back too often, then the turn is recorded lost', () => {
      expect(decideTurnStep(run(1), { type: 'JobNotRunning', requeues: 3 })).toEqual([
        {
          type: 'RecordFailure',
          code: 'lost',
          message: NARRATION_FAILURE_MESSAGES.lost,
          attempts: 3,
        },
      ]);
    });

    it('when a never-requeued turn is given up, then it still counts one attempt', () => {
      expect(
        decideTurnStep(run(1, { maxRequeues: 0 }), { type: 'JobNotRunning', requeues: 0 }),
      ).toEqual([expect.objectContaining({ code: 'lost', attempts: 1 })]);
    });
  });

  describe('given a final failure that could not be recorded', () => {
    it.each([
      [1, 500],
      [2, 1_000],
      [3, 2_000],
      [5, 8_000],
      [6, 10_000],
      [40, 10_000],
    ])('when it failed %i times, then it is tried again after %i ms', (tries, afterMs) => {
      expect(decideTurnStep(run(1), { type: 'FailureNotRecorded', tries })).toEqual([
        { type: 'RecordFailureAgain', afterMs },
      ]);
    });
  });
});

describe('pauseMsOfRetryAfter', () => {
  it('honours a Retry-After up to ten minutes and falls back to the default', () => {
    expect(pauseMsOfRetryAfter(1_234.4)).toBe(1_234);
    expect(pauseMsOfRetryAfter(60 * 60_000)).toBe(10 * 60_000);
    expect(pauseMsOfRetryAfter(undefined)).toBe(DEFAULT_PROVIDER_PAUSE_MS);
    expect(pauseMsOfRetryAfter(0)).toBe(DEFAULT_PROVIDER_PAUSE_MS);
    expect(pauseMsOfRetryAfter(Number.NaN)).toBe(DEFAULT_PROVIDER_PAUSE_MS);
  });
});
