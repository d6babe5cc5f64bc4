// Moves committed outbox rows to BullMQ. The fast path publishes the rows of
// an append right after it commits; the sweeper finds rows left behind (the
// process died after the commit, Redis was down) and enqueues them. Either
// path may enqueue a row twice; the row's deterministic job id makes the
// second `add` a no-op, so at-least-once here is exactly-once in the queue.
//
// Marking a published row enqueued only spares the sweeper a redundant `add`,
// so the fast path does not wait for it: the marks of everything published
// within `markEveryMs` go to Postgres in one UPDATE, off the caller's path. A
// turn's handoff then costs one transaction (the append) instead of two, and
// a process that dies with marks unwritten leaves rows the sweeper re-adds
// harmlessly. The window is a second, well inside `staleAfterMs`, so a live
// process has marked a row before the sweeper looks at it; a shorter one only
// spends more statements (at 50 ms, one UPDATE a turn at a player's pace).
import { type Kysely, sql } from 'kysely';
import { type Database, parseInt8 } from './database';
import type { OutboxMessage, OutboxPublisher } from './event-store.types';

/** What the relay is given to reach the queue (libs/queue's QueueProducer is one). */
export interface OutboxEnqueuer {
  enqueueOutbox(message: { jobName: string; payload: unknown; jobId: string }): Promise<unknown>;
}

export interface OutboxLogger {
  warn(message: string, context?: Record<string, unknown>): void;
}

export interface OutboxRelayOptions {
  /** How often the sweeper looks for rows left behind. */
  sweepIntervalMs?: number;
  /** Rows younger than this belong to the fast path; the sweeper leaves them alone. */
  staleAfterMs?: number;
  /** Rows per sweep, so one sweep's transaction stays short. */
  batchSize?: number;
  /** Enqueued rows are deleted after this long. */
  retainEnqueuedMs?: number;
  /** How long the fast path's marks gather before one UPDATE writes them. */
  markEveryMs?: number;
  logger?: OutboxLogger;
}

const jsonLogger: OutboxLogger = {
  warn: (message, context) =>
    console.warn(JSON.stringify({ level: 'warn', context: 'OutboxRelay', message, ...context })),
};

export class OutboxRelay implements OutboxPublisher {
  private readonly sweepIntervalMs: number;
  private readonly staleAfterMs: number;
  private readonly batchSize: number;
  private readonly retainEnqueuedMs: number;
  private readonly markEveryMs: number;
  private readonly logger: OutboxLogger;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private unmarked: number[] = [];
  private markTimer: NodeJS.Timeout | undefined;
  private readonly markWrites = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly enqueuer: OutboxEnqueuer,
    options: OutboxRelayOptions = {},
  ) {
    this.sweepIntervalMs = options.sweepIntervalMs ?? 2_000;
    this.staleAfterMs = options.staleAfterMs ?? 5_000;
    this.batchSize = options.batchSize ?? 100;
    this.retainEnqueuedMs = options.retainEnqueuedMs ?? 24 * 3600_000;
    this.markEveryMs = options.markEveryMs ?? 1_000;
    this.logger = options.logger ?? jsonLogger;
  }

  /**
   * Enqueues committed rows; resolves once they are in the queue. Marking them
   * follows within `markEveryMs` (`flushMarks` waits for it). Never throws: the
   * events are already committed, so a failure here only delays the job until
   * the sweeper's next pass.
   */
  async publish(messages: readonly OutboxMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const enqueued = await this.enqueueAll(messages);
    if (enqueued.length === 0) return;
    this.unmarked.push(...enqueued);
    this.markTimer ??= setTimeout(() => void this.writeMarks(), this.markEveryMs).unref();
  }

  /** Writes the marks gathered so far now, and waits for every write under way. */
  async flushMarks(): Promise<void> {
    await this.writeMarks();
    await Promise.all(this.markWrites);
  }

  /**
   * One sweep: locks up to `batchSize` stale rows (SKIP LOCKED, so several
   * processes can sweep at once without taking the same rows), enqueues them
   * and marks them, in one transaction. Returns how many rows it enqueued.
   */
  async sweepOnce(): Promise<number> {
    const enqueued = await this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('outbox')
        .select(['id', 'queue', 'job_name', 'job_id', 'payload'])
        .where('enqueued_at', 'is', null)
        .where(
          sql<boolean>`created_at < now() - make_interval(secs => ${this.staleAfterMs / 1000})`,
        )
        .orderBy('created_at')
        .orderBy('id')
        .limit(this.batchSize)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return [];
      const ids = await this.enqueueAll(
        rows.map((row) => ({
          id: parseInt8(row.id, 'outbox id'),
          queue: row.queue,
          jobName: row.job_name,
          jobId: row.job_id,
          payload: row.payload,
        })),
      );
      if (ids.length > 0) await this.markEnqueued(trx, ids);
      return ids;
    });
    await this.db
      .deleteFrom('outbox')
      .where(
        'id',
        'in',
        this.db
          .selectFrom('outbox')
          .select('id')
          .where('enqueued_at', '<', new Date(Date.now() - this.retainEnqueuedMs))
          .limit(1_000),
      )
      .execute();
    return enqueued.length;
  }

  /** Starts the periodic sweeper (idempotent). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A slow sweep (Redis timing out) must not pile up overlapping ones.
      if (this.sweeping) return;
      this.sweeping = this.sweepOnce()
        .catch((error: unknown) =>
          this.logger.warn('outbox sweep failed; retrying on the next tick', {
            error: errorMessage(error),
          }),
        )
        .finally(() => {
          this.sweeping = undefined;
        });
    }, this.sweepIntervalMs);
    this.timer.unref();
  }

  /**
   * Stops the sweeper, waits for a sweep in flight (bounded by the producer's
   * timeouts) and writes the marks still gathered.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
    await this.flushMarks();
  }

  private writeMarks(): Promise<void> {
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    const ids = this.unmarked;
    this.unmarked = [];
    if (ids.length === 0) return Promise.resolve();
    const write: Promise<void> = this.markEnqueued(this.db, ids)
      .catch((error: unknown) =>
        this.logger.warn(
          'could not mark outbox rows as enqueued; the sweeper will re-enqueue them',
          { outboxIds: ids, error: errorMessage(error) },
        ),
      )
      .finally(() => this.markWrites.delete(write));
    this.markWrites.add(write);
    return write;
  }

  private async enqueueAll(messages: readonly OutboxMessage[]): Promise<number[]> {
    const results = await Promise.allSettled(
      messages.map((m) =>
        this.enqueuer.enqueueOutbox({ jobName: m.jobName, payload: m.payload, jobId: m.jobId }),
      ),
    );
    const enqueued: number[] = [];
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') enqueued.push(messages[i].id);
      else {
        this.logger.warn('outbox row not enqueued; it stays pending for the sweeper', {
          outboxId: messages[i].id,
          jobId: messages[i].jobId,
          error: errorMessage(result.reason),
        });
      }
    });
    return enqueued;
  }

  private async markEnqueued(db: Kysely<Database>, ids: readonly number[]): Promise<void> {
    await db
      .updateTable('outbox')
      .set({ enqueued_at: sql<Date>`now()` })
      .where(sql<boolean>`id = ANY(${ids.map(String)}::bigint[])`)
      .where('enqueued_at', 'is', null)
      .execute();
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
