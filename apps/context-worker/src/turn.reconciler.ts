// Postgres is the system of record and Redis only the transport: this pass rebuilds Redis's part
// from the log. Every RECONCILE_INTERVAL_MS it compares the turns in flight (the turns_in_flight
// read model, written with the events; TurnsInFlightRepository) with their narrate jobs, and puts back under the turn's
// deterministic job id every job that is missing (Redis lost its data), failed (its final
// failure could not be recorded) or stalled with nobody left to notice; a turn put back more
// than RECONCILE_MAX_REQUEUES times, or in flight past NARRATE_TURN_DEADLINE_MS, is ended. It
// also re-enqueues the memory work the log says is owed once Redis is found to have lost data.
//
// It runs in the context worker, beside the narrate jobs it repairs: that process already holds
// the database, the queue producer and the code that records a turn's failure, and a context
// worker is needed for any turn to progress anyway (the API stays free of periodic work that
// would compete with requests). Every context worker runs the timer; a transaction-level
// advisory lock taken for each pass makes one pass at a time active per installation
// (database), and a worker that dies or freezes mid-pass drops the lock with its transaction.
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { decideTurnStep, type TurnFact, type TurnRun, type TurnStep } from '@chronicle/adventure';
import { TurnsInFlightRepository } from '@chronicle/adventure-store';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import { ChronicleMetrics } from '@chronicle/metrics';
import { ControlPlane, describeError, type AppConfig } from '@chronicle/platform';
import { JobName, narrateJobId, QueueName, QueueProducer } from '@chronicle/queue';
import { type Kysely, sql } from 'kysely';
import { NarrateTurnUseCase } from './narrate-turn.use-case';
import { WORKER_CONFIG } from './worker-config.token';

export interface ReconcileReport {
  /** false when another process held the installation's lock */
  ran: boolean;
  inFlight: number;
  requeued: number;
  lost: number;
  deadline: number;
  /** memory jobs re-enqueued after Redis was found to have lost its data */
  memoryRequeued: number;
}

/** Rows per pass: a backlog larger than this is worked through over several passes. */
const BATCH = 500;
/** How far back the outbox remembers memory work (its rows are kept a day after enqueue). */
const MEMORY_LOOKBACK = '24 hours';
/** Job states in which the job is on its way: nothing to repair. */
const ALIVE = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children', 'active']);

@Injectable()
export class TurnReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TurnReconciler');
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<unknown> | undefined;
  /** Active jobs seen without a lock on the previous pass: stalled if still so on this one. */
  private unlocked = new Set<string>();
  /** Set at shutdown: a tick that comes after it (the first, scheduled at bootstrap) runs nothing. */
  private stopped = false;

  constructor(
    @Inject(EVENT_STORE_DB) private readonly db: Kysely<Database>,
    private readonly turns: TurnsInFlightRepository,
    private readonly producer: QueueProducer,
    private readonly narrateTurn: NarrateTurnUseCase,
    private readonly controlPlane: ControlPlane,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly metrics: ChronicleMetrics,
  ) {}

  onApplicationBootstrap(): void {
    // The first pass runs at once: it is the one that sets Redis's data-loss marker on a new
    // installation. Left to the first tick, a fresh Redis would still have no marker when the
    // first turns' memory work sits in the outbox, and that work would be re-enqueued as if
    // Redis had lost it (a second, wasted memory pass).
    setImmediate(() => this.tick());
    this.timer = setInterval(() => this.tick(), this.config.reconcileIntervalMs);
    this.timer.unref();
  }

  private tick(): void {
    // A slow pass (Redis or Postgres timing out) must not pile up overlapping ones.
    if (this.passing || this.stopped) return;
    this.passing = this.reconcileOnce()
      .then((report) => this.metrics.recordReconcilePass(report))
      .catch((error: unknown) =>
        this.logger.warn({
          msg: 'reconcile pass failed; retrying on the next tick',
          error: describeError(error),
        }),
      )
      .finally(() => (this.passing = undefined));
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.passing;
  }

  private get lockKey(): string {
    return `chronicle-reconciler:${this.config.queuePrefix}`;
  }

  /**
   * One pass, under the installation's lock (skipped when another process holds it). The lock
   * is a transaction's, held on a connection that does nothing else: the pass's own reads and
   * writes use the pool (a row it updates is never held against an append), and a holder that
   * freezes (SIGSTOP) loses the lock when Postgres ends its idle transaction, so a stuck worker
   * cannot stop every other one from reconciling.
   */
  async reconcileOnce(): Promise<ReconcileReport> {
    const idleLimitMs = Math.max(10_000, 2 * this.config.reconcileIntervalMs);
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('idle_in_transaction_session_timeout', ${String(idleLimitMs)}, true)`.execute(
        trx,
      );
      const { rows } = await sql<{ locked: boolean }>`
        SELECT pg_try_advisory_xact_lock(hashtext(${this.lockKey})) AS locked
      `.execute(trx);
      if (!rows[0]?.locked) {
        return { ran: false, inFlight: 0, requeued: 0, lost: 0, deadline: 0, memoryRequeued: 0 };
      }
      return this.pass(this.db);
    });
  }

  private async pass(db: Kysely<Database>): Promise<ReconcileReport> {
    const report: ReconcileReport = {
      ran: true,
      inFlight: 0,
      requeued: 0,
      lost: 0,
      deadline: 0,
      memoryRequeued: 0,
    };
    report.memoryRequeued = await this.memoryAfterDataLoss(db);
    // A turn younger than one interval belongs to the outbox's fast path still.
    const rows = await this.turns.olderThan(this.config.reconcileIntervalMs, BATCH);
    report.inFlight = rows.length;
    const unlocked = new Set<string>();
    const queue = this.producer.queue(QueueName.Narrate);
    for (const row of rows) {
      const { adventureId, turnId } = row;
      const overdue = this.failureFor({
        type: 'Reconciled',
        ageMs: row.ageMs,
        requeues: row.requeues,
      });
      if (overdue) {
        if (await this.end(adventureId, turnId, overdue, row.requeues)) report.deadline++;
        continue;
      }
      const jobId = narrateJobId(turnId);
      // The job's state alone, in one script: a loaded system has hundreds of turns waiting
      // longer than an interval on every pass, and the job itself is only needed to remove it.
      const found = await queue.getJobState(jobId);
      const state = found === 'unknown' ? 'missing' : found;
      let repair = !ALIVE.has(state);
      if (state === 'active' && !(await this.producer.holdsLock(QueueName.Narrate, jobId))) {
        // BullMQ's own stalled check takes an active job without a lock back; only one that is
        // still stuck on the next pass is ours to repair.
        unlocked.add(jobId);
        repair = this.unlocked.has(jobId);
      }
      if (!repair) continue;
      if (!(await this.turns.isInFlight(adventureId, turnId))) continue;
      const lost = this.failureFor({ type: 'JobNotRunning', requeues: row.requeues });
      if (lost) {
        if (await this.end(adventureId, turnId, lost, row.requeues)) report.lost++;
        continue;
      }
      // The old job is removed first: an add under an id that exists (failed, completed) is a
      // no-op. A remove that loses to a worker taking the job is harmless: the add then no-ops.
      await queue.remove(jobId).catch(() => undefined);
      // The turn's start (its row's, on this clock): POST → model request counts the loss too.
      const requestedAt = Math.round(Date.now() - row.ageMs);
      await this.producer.enqueue(JobName.NarrateTurn, { adventureId, turnId, requestedAt });
      await this.turns.countRequeue(adventureId, turnId);
      report.requeued++;
      this.logger.warn({
        msg: 'narrate job re-enqueued',
        adventureId,
        turnId,
        jobId,
        found: state,
        requeues: row.requeues + 1,
      });
    }
    this.unlocked = unlocked;
    return report;
  }

  /** The failure the turn workflow records for a fact of this pass; null: the pass goes on. */
  private failureFor(fact: TurnFact): Extract<TurnStep, { type: 'RecordFailure' }> | null {
    const run: TurnRun = {
      attempt: 1,
      maxAttempts: 1,
      deadlineMs: this.config.narrateTurnDeadlineMs,
      maxRequeues: this.config.reconcileMaxRequeues,
    };
    const steps = decideTurnStep(run, fact);
    return steps.find((step) => step.type === 'RecordFailure') ?? null;
  }

  /** Ends a turn the reconciler gives up on; a running attempt's model call is cancelled. */
  private async end(
    adventureId: string,
    turnId: string,
    failure: Extract<TurnStep, { type: 'RecordFailure' }>,
    requeues: number,
  ): Promise<boolean> {
    const code = failure.code;
    const recorded = await this.narrateTurn.recordFailure(
      adventureId,
      turnId,
      failure,
      failure.attempts,
    );
    if (recorded) {
      await this.controlPlane.cancelTurn(adventureId, turnId).catch(() => undefined);
      this.logger.warn({
        msg: `turn ended by the reconciler: ${code}`,
        adventureId,
        turnId,
        requeues,
      });
    }
    return recorded;
  }

  /**
   * Memory passes compute what is owed from the log, so a lost memory job only matters for an
   * adventure with no later turn to bring a new one. A marker key that vanished says Redis lost
   * its data (a restart without persistence, a FLUSHALL): every adventure the outbox asked
   * memory work for within its retention gets a memory job again (deduplicated per adventure,
   * and a pass with nothing owed writes nothing).
   */
  private async memoryAfterDataLoss(db: Kysely<Database>): Promise<number> {
    if (!(await this.producer.lostDataSinceLastAsked())) return 0;
    const rows = await db
      .selectFrom('outbox')
      .select(sql<string>`payload->>'adventureId'`.as('adventure_id'))
      .distinct()
      .where('job_name', '=', JobName.UpdateMemory)
      .where(sql<boolean>`created_at > now() - interval '${sql.raw(MEMORY_LOOKBACK)}'`)
      .execute();
    let enqueued = 0;
    for (const { adventure_id } of rows) {
      if (!adventure_id) continue;
      await this.producer.enqueue(JobName.UpdateMemory, { adventureId: adventure_id });
      enqueued++;
    }
    if (enqueued > 0) {
      this.logger.warn({
        msg: 'Redis lost its data: memory jobs re-enqueued from the outbox',
        adventures: enqueued,
      });
    }
    return enqueued;
  }
}
