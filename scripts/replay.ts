// `npm run replay -- <adventure id>` or `npm run replay -- --all`: rebuilds adventures from
// their first event and compares each rebuild with its stored snapshot and with the way every
// load reaches the projection (snapshot + newer events). Differences are printed with the first
// event where the two disagree; the exit code is 1 when any adventure differs, 2 on bad usage.
import { ADVENTURE_STREAM_PREFIX } from '@chronicle/adventure';
import {
  AdventureReplayer,
  formatReplayReport,
  type ReplayReport,
} from '@chronicle/adventure-store';
import {
  createDatabase,
  EventStoreRepository,
  SnapshotRepository,
  type Database,
} from '@chronicle/event-store';
import { ensurePostgres, loadConfig, ServiceUnavailableError } from '@chronicle/platform';
import type { Kysely } from 'kysely';

const USAGE = 'usage: npm run replay -- <adventure id> | --all';

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const all = args.includes('--all');
  const ids = args.filter((arg) => !arg.startsWith('--'));
  if (all === ids.length > 0 || (!all && ids.length === 0)) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  await ensurePostgres(config.databaseUrl);
  const db = createDatabase(config.databaseUrl, 2);
  try {
    const replayer = new AdventureReplayer(
      new EventStoreRepository(db),
      new SnapshotRepository(db),
    );
    const targets = all ? await adventureIds(db) : ids;
    const progress = all ? new ProgressBar(targets.length) : null;
    const reports: ReplayReport[] = [];
    const started = Date.now();
    for (const id of targets) {
      const report = await replayer.replay(id);
      reports.push(report);
      if (!progress) console.log(formatReplayReport(report));
      else if (!report.equal) progress.interrupt(() => console.log(formatReplayReport(report)));
      progress?.tick();
    }
    progress?.done();
    const differing = reports.filter((report) => !report.equal);
    const events = reports.reduce((sum, report) => sum + report.events, 0);
    console.log(
      `replayed ${reports.length} adventure${reports.length === 1 ? '' : 's'} (${events} events) in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
        (differing.length === 0
          ? 'every rebuild equals its stored projection'
          : `${differing.length} differ${differing.length === 1 ? 's' : ''} (${differing.map((r) => r.adventureId).join(', ')})`),
    );
    return differing.length === 0 ? 0 : 1;
  } finally {
    await db.destroy();
  }
}

async function adventureIds(db: Kysely<Database>): Promise<string[]> {
  const rows = await db
    .selectFrom('streams')
    .select('stream_id')
    .where('stream_id', 'like', `${ADVENTURE_STREAM_PREFIX}%`)
    .orderBy('stream_id')
    .execute();
  return rows.map((row) => row.stream_id.slice(ADVENTURE_STREAM_PREFIX.length));
}

/** One line on stderr, redrawn in place on a terminal and every 10% otherwise. */
class ProgressBar {
  private doneCount = 0;
  private lastPercent = -1;
  private readonly tty = process.stderr.isTTY === true;

  constructor(private readonly total: number) {
    this.draw();
  }

  tick(): void {
    this.doneCount++;
    this.draw();
  }

  /** Prints a line of output without leaving a half-drawn bar above it. */
  interrupt(print: () => void): void {
    if (this.tty) process.stderr.write('\r\x1b[K');
    print();
    this.lastPercent = -1;
    this.draw();
  }

  done(): void {
    if (this.tty) process.stderr.write('\n');
  }

  private draw(): void {
    const percent = this.total === 0 ? 100 : Math.floor((this.doneCount / this.total) * 100);
    if (!this.tty && (percent === this.lastPercent || percent % 10 !== 0)) return;
    this.lastPercent = percent;
    const width = 30;
    const filled = Math.round((percent / 100) * width);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.doneCount}/${this.total} ${percent}%`;
    process.stderr.write(this.tty ? `\r${bar}` : `${bar}\n`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof ServiceUnavailableError ? error.message : error);
    process.exit(1);
  },
);
