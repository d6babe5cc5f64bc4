import {
  ALL_JOBS,
  assertEveryJobHandled,
  attemptsOf,
  JOB_QUEUE,
  jobIdOf,
  JobName,
  jobOptions,
  NARRATE_BACKOFF,
  narrateBackoff,
  narrateJobId,
  outboxRow,
  QueueName,
  queueOf,
  safeJobId,
  exponentialRetryMs,
} from './queue.registry';

describe('the queue registry', () => {
  it('maps every job to a known queue', () => {
    expect(JOB_QUEUE).toEqual({
      'narrate-turn': 'narrate',
      'update-memory': 'memory',
      'notify-webhooks': 'webhooks',
      'deliver-webhook': 'webhooks',
      'turn-timer': 'narrate',
    });
    for (const job of ALL_JOBS) expect(Object.values(QueueName)).toContain(queueOf(job));
  });

  it('gives a narrate job a deterministic id from its turn, 3 attempts and jittered backoff', () => {
    const payload = { adventureId: 'adv-1', turnId: 'turn-42' };

    const first = jobOptions(JobName.NarrateTurn, payload);
    const again = jobOptions(JobName.NarrateTurn, { ...payload });

    expect(first.jobId).toBe('narrate-turn-42');
    expect(again).toEqual(first);
    expect(first.attempts).toBe(3);
    expect(first.backoff).toMatchObject({ type: NARRATE_BACKOFF, jitter: expect.any(Number) });
    expect(first.removeOnComplete).toMatchObject({ count: expect.any(Number) });
    expect(first.removeOnFail).toMatchObject({ count: expect.any(Number) });
  });

  it('fixes the attempts when the job is enqueued, and a worker reads them back from the job', () => {
    const payload = { adventureId: 'adv-1', turnId: 'turn-42' };
    const configured = jobOptions(JobName.NarrateTurn, payload, { [JobName.NarrateTurn]: 7 });

    expect(configured.attempts).toBe(7);
    expect(attemptsOf({ opts: configured })).toBe(7);
    expect(attemptsOf({ opts: jobOptions(JobName.UpdateMemory, { adventureId: 'a' }) })).toBe(5);
    expect(attemptsOf({ opts: {} })).toBe(1);
  });

  it('derives a job id in one place: the outbox row, the registry and a lookup agree', () => {
    const payload = { adventureId: 'adv-1', turnId: 'turn-42' };

    expect(jobIdOf(JobName.NarrateTurn, payload)).toBe(narrateJobId('turn-42'));
    expect(outboxRow({ jobName: JobName.NarrateTurn, payload }).jobId).toBe('narrate-turn-42');
    expect(jobIdOf(JobName.UpdateMemory, { adventureId: 'adv-1' })).toBeUndefined();
  });

  it("narrate backoff grows exponentially within its jitter and honours a 429's Retry-After", () => {
    const job = { opts: jobOptions(JobName.NarrateTurn, { adventureId: 'a', turnId: 't' }) };

    const second = narrateBackoff(2, NARRATE_BACKOFF, new Error('boom'), job);
    const throttled = narrateBackoff(
      1,
      NARRATE_BACKOFF,
      Object.assign(new Error('429'), { retryAfterMs: 7_000 }),
      job,
    );

    expect(second).toBeGreaterThanOrEqual(2_000);
    expect(second).toBeLessThanOrEqual(4_000);
    expect(throttled).toBe(7_000);
  });

  it('deduplicates memory jobs per adventure instead of fixing their id', () => {
    const options = jobOptions(JobName.UpdateMemory, { adventureId: 'adv-7' });

    expect(options.jobId).toBeUndefined();
    expect(options.deduplication).toEqual({ id: 'memory-adv-7', keepLastIfActive: true });
  });

  it('refuses ids containing ":" and payloads without their ids', () => {
    expect(() => safeJobId('narrate:1')).toThrow('must not contain ":"');
    expect(() => jobOptions(JobName.NarrateTurn, { adventureId: 'a', turnId: 'x:y' })).toThrow(':');
    expect(() => jobOptions(JobName.NarrateTurn, { adventureId: 'a', turnId: '' })).toThrow(
      'turnId',
    );
  });

  describe('assertEveryJobHandled', () => {
    it('accepts exactly one handler per job of the consumed queues', () => {
      expect(() =>
        assertEveryJobHandled(
          [{ jobName: JobName.NarrateTurn }, { jobName: JobName.TurnTimer }],
          [QueueName.Narrate],
        ),
      ).not.toThrow();
      expect(() =>
        assertEveryJobHandled([
          { jobName: JobName.NarrateTurn },
          { jobName: JobName.UpdateMemory },
          { jobName: JobName.NotifyWebhooks },
          { jobName: JobName.DeliverWebhook },
          { jobName: JobName.TurnTimer },
        ]),
      ).not.toThrow();
    });

    it('gives a delivery a deterministic id per webhook and message, and unjittered exponential backoff it can record', () => {
      const payload = {
        webhookId: 'w1',
        event: 'turn.narrated',
        messageId: 'msg_t1_narrated',
        data: { adventureId: 'a1', turnId: 't1' },
      };
      const options = jobOptions(
        JobName.DeliverWebhook,
        payload,
        { [JobName.DeliverWebhook]: 4 },
        {
          [JobName.DeliverWebhook]: 100,
        },
      );
      expect(options).toMatchObject({
        jobId: 'webhook-w1-msg_t1_narrated',
        attempts: 4,
        backoff: { type: 'exponential', delay: 100 },
      });
      expect([1, 2, 3].map((attempt) => exponentialRetryMs(attempt, 100))).toEqual([100, 200, 400]);
      expect(jobIdOf(JobName.NotifyWebhooks, { ...payload, adventureId: 'a1', userId: 'u1' })).toBe(
        'webhooks-msg_t1_narrated',
      );
    });

    it('given a room timer, then its id names the round (or seat) and it waits its delay', () => {
      const payload = {
        adventureId: 'adv-1',
        timer: { timer: 'round' as const, roundId: 'round-3' },
        delayMs: 5_000,
      };
      const options = jobOptions(JobName.TurnTimer, payload);
      expect(options.jobId).toBe('timer-adv-1-round-round-3');
      expect(options.delay).toBe(5_000);
    });

    it('names a missing handler, a duplicate and an unknown job', () => {
      expect(() => assertEveryJobHandled([], [QueueName.Memory])).toThrow(
        'no handler for "update-memory"',
      );
      expect(() =>
        assertEveryJobHandled(
          [{ jobName: JobName.NarrateTurn }, { jobName: JobName.NarrateTurn }],
          [QueueName.Narrate],
        ),
      ).toThrow('2 handlers for "narrate-turn"');
      expect(() =>
        assertEveryJobHandled(
          [{ jobName: JobName.NarrateTurn }, { jobName: 'summarise' }],
          [QueueName.Narrate],
        ),
      ).toThrow('unknown job "summarise"');
    });

    it('refuses a handler for a queue this process does not consume', () => {
      expect(() =>
        assertEveryJobHandled(
          [{ jobName: JobName.NarrateTurn }, { jobName: JobName.UpdateMemory }],
          [QueueName.Narrate],
        ),
      ).toThrow('queue "memory" is not consumed here');
    });
  });
});
