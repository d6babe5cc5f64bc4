// One fault-suite file's installation: a private Postgres cluster and a private Redis (so they
// can be crashed, stopped, frozen and filled), the fake model, the built apps as processes, a
// recording client and the history checker. `check()` runs the checker over the whole log and
// throws unless it holds; call it after every scenario (the log only grows, so every check
// covers every scenario before it too).
import {
  AppSystem,
  checkHistory,
  expectCleanHistory,
  HistoryLedger,
  PrivatePostgres,
  PrivateRedis,
  type AppName,
  type HistoryCheckOptions,
  type HistoryReport,
  type PrivateRedisOptions,
} from '@chronicle/testing';
import { ScriptedNarrator } from '../../e2e/support/scripted-narrator';
import { recordScenario } from './fault-report';
import { RecordingClient } from './recording.client';

export interface FaultSystemOptions {
  apps?: AppName[];
  env?: Record<string, string>;
  redis?: PrivateRedisOptions;
}

/** Settings that make a fault show within seconds: short locks, fast sweeps. */
export const FAST_FAULT_ENV: Record<string, string> = {
  NARRATE_LOCK_MS: '2000',
  OUTBOX_SWEEP_INTERVAL_MS: '200',
  NARRATE_ATTEMPTS: '3',
  MODEL_TIMEOUT_MS: '5000',
  SHUTDOWN_TIMEOUT_MS: '10000',
  // the durable branch's reconciler and deadline, at test speed (ignored by a build without them)
  RECONCILE_INTERVAL_MS: '1000',
};

/** The scripted narrator's take marker: the text of one attempt. */
export const TAKE_MARKER = /\(take \d+\)/;

export class FaultSystem {
  readonly narrator = new ScriptedNarrator();
  /** what the clients of the scenario running now were told */
  private ledger = new HistoryLedger();
  private readonly ledgers: HistoryLedger[] = [this.ledger];
  /** problems a scenario's check already failed on, so the whole-log check names only new ones */
  private readonly reported = new Set<string>();

  private constructor(
    readonly system: AppSystem,
    readonly postgres: PrivatePostgres,
    readonly redis: PrivateRedis,
  ) {}

  static async start(options: FaultSystemOptions = {}): Promise<FaultSystem> {
    const postgres = await PrivatePostgres.start();
    let redis: PrivateRedis | undefined;
    try {
      redis = await PrivateRedis.start(options.redis);
      const database = await postgres.createDatabase();
      const system = await AppSystem.create({
        services: { database, redisUrl: redis.url },
        env: { ...FAST_FAULT_ENV, ...options.env },
      });
      const faults = new FaultSystem(system, postgres, redis);
      system.fake.setDefaultReply(faults.narrator.reply);
      try {
        for (const app of options.apps ?? ['api', 'context-worker']) await system.startApp(app);
      } catch (error) {
        const output = faults.output();
        await faults.close();
        throw Object.assign(error as Error, {
          message: `${(error as Error).message}\n\n${output}`,
        });
      }
      return faults;
    } catch (error) {
      await redis?.destroy();
      await postgres.destroy();
      throw error;
    }
  }

  /** A client of the API as it runs now (a restarted API may listen elsewhere). */
  get client(): RecordingClient {
    return new RecordingClient(this.system.apiUrl, this.ledger);
  }

  /** A fresh adventure on the fake model. */
  async newAdventure(title = 'The Salt Road', client = this.client): Promise<string> {
    const id = await client.createAdventure({
      title,
      opening: 'The caravan halts at the edge of the salt flats. The guide will not go further.',
      placeholders: {},
      storyCards: [],
      settings: { model: 'fake-model' },
    });
    this.ledger.created(id);
    return id;
  }

  /**
   * The history checker over the scenario's adventures (those its clients created or wrote
   * to); throws with every problem unless it holds. A new scenario starts after it. The
   * scenario's name and counts go to the suite's report (FAULTS_REPORT) for RELIABILITY.md.
   */
  async check(
    scenario: string,
    injected: string,
    options: HistoryCheckOptions = {},
  ): Promise<HistoryReport> {
    const ledger = this.ledger;
    this.beginScenario();
    const report = await checkHistory(this.system.database.connectionString, ledger, {
      attemptMarker: TAKE_MARKER,
      adventures: ledger.adventures,
      ...options,
    });
    for (const problem of report.problems) this.reported.add(problem);
    recordScenario(scenario, injected, report);
    expectCleanHistory(report);
    return report;
  }

  private beginScenario(): void {
    if (this.ledger.adventures.size === 0) return;
    this.ledger = new HistoryLedger();
    this.ledgers.push(this.ledger);
  }

  /**
   * The checker over the whole log and every scenario's ledger (for afterAll): throws only on
   * problems no scenario's check already failed on, such as one scenario's work landing in
   * another's adventures.
   */
  async checkWholeLog(suite: string): Promise<HistoryReport> {
    const report = await checkHistory(
      this.system.database.connectionString,
      HistoryLedger.merge(this.ledgers),
      { attemptMarker: TAKE_MARKER, settleTimeoutMs: 5_000 },
    );
    recordScenario(`${suite}: whole log`, 'every scenario of the file, on one log', report);
    expectCleanHistory({
      ...report,
      problems: report.problems.filter((problem) => !this.reported.has(problem)),
    });
    return report;
  }

  /**
   * Runs a scenario: a new ledger for its clients (so a scenario that failed before its check
   * leaves nothing in the next one's), and on failure the processes' and servers' output
   * appended to the error.
   */
  async explainFailure<T>(body: () => Promise<T>): Promise<T> {
    this.beginScenario();
    try {
      return await body();
    } catch (error) {
      if (error instanceof Error) error.message = `${error.message}\n\n${this.output()}`;
      throw error;
    }
  }

  output(): string {
    return [this.system.output(60), this.postgres.logTail(), this.redis.logTail()].join('\n');
  }

  async close(): Promise<void> {
    // the servers come back first, or the apps' graceful stop would wait on them
    this.redis.thaw();
    if (!this.redis.isRunning) await this.redis.startServer().catch(() => undefined);
    if (!this.postgres.isRunning) await this.postgres.startServer().catch(() => undefined);
    await this.system.close();
    await this.redis.destroy();
    await this.postgres.destroy();
  }
}
