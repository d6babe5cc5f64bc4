// The history checker: after a run (a fault scenario, a benchmark, a soak), it reads the whole
// event log straight from Postgres and holds it against what the clients were told. What it
// asserts is what "nothing lost" means to a player:
//   - every acknowledged action (202) is in the log exactly once, as the turn it was told;
//   - every refused one (4xx) is absent;
//   - every stream's versions run 1, 2, 3, … with no gap;
//   - every turn has exactly one terminal event (Narrated, NarrationFailed, NarrationCancelled);
//   - no client's stream showed the text of two attempts: what a screen showed at `done` is the
//     start of the narration the log kept, and `done` carries that narration.
// Clients record into a `HistoryLedger` as they go; `checkHistory` waits (bounded) for the turns
// in flight to end, then reads and compares. It asserts nothing itself: `expectCleanHistory`
// throws with every problem listed, and the report's counts are what RELIABILITY.md quotes.
import { Client } from 'pg';
import type { TurnStreamResult } from './sse-client';

/** An answer to a request that may start a turn (an action, a continue, a retry). */
export interface RecordedSubmission {
  adventureId: string;
  /** the client's id (the idempotency key, and the id of the event that starts the turn) */
  id: string;
  /** the HTTP status, or 0 when no answer came (connection refused or cut, timeout) */
  status: number;
  /** the turn id a 202 named */
  turnId?: string;
}

/** What one client's screen saw of one turn. */
export interface RecordedStream {
  adventureId: string;
  turnId: string;
  result: TurnStreamResult;
}

/** What the clients were told, in the order they were told it. */
export class HistoryLedger {
  readonly submissions: RecordedSubmission[] = [];
  readonly streams: RecordedStream[] = [];
  /** adventures the clients created or wrote to */
  readonly adventures = new Set<string>();

  created(adventureId: string): void {
    this.adventures.add(adventureId.toLowerCase());
  }

  submitted(submission: RecordedSubmission): void {
    this.created(submission.adventureId);
    this.submissions.push({ ...submission, id: submission.id.toLowerCase() });
  }

  watched(stream: RecordedStream): void {
    this.created(stream.adventureId);
    this.streams.push(stream);
  }

  /** One ledger holding everything the given ones recorded (a suite's scenarios together). */
  static merge(ledgers: readonly HistoryLedger[]): HistoryLedger {
    const merged = new HistoryLedger();
    for (const ledger of ledgers) {
      merged.submissions.push(...ledger.submissions);
      merged.streams.push(...ledger.streams);
      for (const id of ledger.adventures) merged.adventures.add(id);
    }
    return merged;
  }
}

export interface HistoryCheckOptions {
  /** how long turns still in flight may take to end before they count as stuck (default 60 s) */
  settleTimeoutMs?: number;
  /**
   * A pattern that tells one attempt's text from another's (the scripted narrator's take
   * marker): a screen that shows two distinct matches showed two attempts.
   */
  attemptMarker?: RegExp;
  /**
   * Check only these adventures' streams (a scenario's own, in a suite that runs many on one
   * log); default: every stream in the log.
   */
  adventures?: ReadonlySet<string>;
}

export interface HistoryReport {
  /** distinct action ids answered 202 */
  acknowledged: number;
  /** …of which the log holds exactly once */
  foundOnce: number;
  /** …of which the log holds none */
  lost: number;
  /** …of which the log holds more than once (the event, or a second start of its turn) */
  duplicated: number;
  /** distinct ids only ever refused (4xx) */
  refused: number;
  /** …of which the log holds one anyway */
  refusedWritten: number;
  /** distinct ids never answered 202 or 4xx (5xx, no answer): either outcome is allowed once */
  unanswered: number;
  /** …of which the log holds one */
  unansweredWritten: number;
  /** submissions (answers) recorded, every status */
  submissions: number;
  /** status → how many answers */
  statuses: Record<string, number>;
  streams: number;
  events: number;
  turns: number;
  /** terminal event type → count; NarrationFailed's codes as `NarrationFailed:<code>` */
  terminals: Record<string, number>;
  /** empty when the history holds */
  problems: string[];
}

interface LoggedEvent {
  streamId: string;
  version: number;
  eventId: string;
  type: string;
  data: Record<string, unknown>;
}

const STARTS = new Set(['PlayerActed', 'RetryRequested']);
const TERMINALS = new Set(['Narrated', 'NarrationFailed', 'NarrationCancelled']);
const ADVENTURE_PREFIX = 'adventure-';
/** Problems listed in full; past this many, the rest are counted. */
const MAX_LISTED = 40;

async function readLog(connectionString: string): Promise<{
  events: LoggedEvent[];
  heads: Map<string, number>;
}> {
  const client = new Client({ connectionString, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const events = await client.query<{
      stream_id: string;
      version: number;
      event_id: string;
      type: string;
      data: Record<string, unknown>;
    }>('SELECT stream_id, version, event_id, type, data FROM events ORDER BY stream_id, version');
    const heads = await client.query<{ stream_id: string; version: number }>(
      'SELECT stream_id, version FROM streams',
    );
    return {
      events: events.rows.map((row) => ({
        streamId: row.stream_id,
        version: Number(row.version),
        eventId: String(row.event_id).toLowerCase(),
        type: row.type,
        data: row.data ?? {},
      })),
      heads: new Map(heads.rows.map((row) => [row.stream_id, Number(row.version)])),
    };
  } finally {
    await client.end();
  }
}

function turnIdOf(event: LoggedEvent): string | undefined {
  const turnId = event.data.turnId;
  return typeof turnId === 'string' ? turnId.toLowerCase() : undefined;
}

/** Turns started in the log that have no terminal event yet. */
function openTurns(events: LoggedEvent[]): string[] {
  const open = new Set<string>();
  for (const event of events) {
    const turnId = turnIdOf(event);
    if (!turnId) continue;
    const key = `${event.streamId}/${turnId}`;
    if (STARTS.has(event.type)) open.add(key);
    else if (TERMINALS.has(event.type)) open.delete(key);
  }
  return [...open];
}

/**
 * Waits until no turn is in flight (or the bound passes), then checks the whole log against
 * the ledger. Postgres must answer; the apps need not be running.
 */
export async function checkHistory(
  connectionString: string,
  ledger: HistoryLedger,
  options: HistoryCheckOptions = {},
): Promise<HistoryReport> {
  const deadline = Date.now() + (options.settleTimeoutMs ?? 60_000);
  const read = async () => {
    const log = await readLog(connectionString);
    const only = options.adventures;
    if (!only) return log;
    const wanted = new Set([...only].map((id) => `${ADVENTURE_PREFIX}${id.toLowerCase()}`));
    return { events: log.events.filter((e) => wanted.has(e.streamId)), heads: log.heads };
  };
  let log = await read();
  while (openTurns(log.events).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    log = await read();
  }
  return compare(log.events, log.heads, ledger, options);
}

function compare(
  events: LoggedEvent[],
  heads: Map<string, number>,
  ledger: HistoryLedger,
  options: HistoryCheckOptions,
): HistoryReport {
  const problems: string[] = [];

  // Versions: 1..n on every stream, and the stream's head row agrees.
  const versions = new Map<string, number[]>();
  for (const event of events) {
    const list = versions.get(event.streamId) ?? [];
    list.push(event.version);
    versions.set(event.streamId, list);
  }
  for (const [streamId, list] of versions) {
    const gap = list.findIndex((version, index) => version !== index + 1);
    if (gap >= 0) {
      problems.push(
        `stream ${streamId}: version ${list[gap]} where ${gap + 1} was due (versions ${list.slice(Math.max(0, gap - 2), gap + 3).join(', ')})`,
      );
    }
    const head = heads.get(streamId);
    if (head !== undefined && head !== list.length) {
      problems.push(`stream ${streamId}: head says version ${head}, the log holds ${list.length}`);
    }
  }

  // Turns: exactly one start and exactly one terminal each.
  interface TurnRecord {
    starts: LoggedEvent[];
    terminals: LoggedEvent[];
  }
  const turns = new Map<string, TurnRecord>();
  const byEventId = new Map<string, LoggedEvent[]>();
  for (const event of events) {
    const key = `${event.streamId}/${event.eventId}`;
    byEventId.set(key, [...(byEventId.get(key) ?? []), event]);
    const turnId = turnIdOf(event);
    if (!turnId || !(STARTS.has(event.type) || TERMINALS.has(event.type))) continue;
    const turnKey = `${event.streamId}/${turnId}`;
    const turn = turns.get(turnKey) ?? { starts: [], terminals: [] };
    if (STARTS.has(event.type)) turn.starts.push(event);
    else turn.terminals.push(event);
    turns.set(turnKey, turn);
  }
  const terminals: Record<string, number> = {};
  for (const [key, turn] of turns) {
    if (turn.starts.length !== 1) {
      problems.push(`turn ${key}: ${turn.starts.length} events start it (one is due)`);
    }
    if (turn.terminals.length === 0) {
      problems.push(`turn ${key}: still in flight, no terminal event`);
    } else if (turn.terminals.length > 1) {
      problems.push(
        `turn ${key}: ${turn.terminals.length} terminal events (${turn.terminals.map((e) => `${e.type}@${e.version}`).join(', ')})`,
      );
    }
    for (const terminal of turn.terminals) {
      const code = terminal.type === 'NarrationFailed' ? terminal.data.code : undefined;
      const name = typeof code === 'string' ? `${terminal.type}:${code}` : terminal.type;
      terminals[name] = (terminals[name] ?? 0) + 1;
      if (turn.starts[0] && terminal.version < turn.starts[0].version) {
        problems.push(`turn ${key}: ${terminal.type} at ${terminal.version} before its start`);
      }
    }
  }

  // Answers: 202 → present once; 4xx only → absent; anything else → at most once.
  interface Answers {
    adventureId: string;
    statuses: number[];
    turnIds: Set<string>;
  }
  const answers = new Map<string, Answers>();
  const statuses: Record<string, number> = {};
  for (const submission of ledger.submissions) {
    statuses[String(submission.status)] = (statuses[String(submission.status)] ?? 0) + 1;
    const key = `${ADVENTURE_PREFIX}${submission.adventureId}/${submission.id}`;
    const entry = answers.get(key) ?? {
      adventureId: submission.adventureId,
      statuses: [],
      turnIds: new Set<string>(),
    };
    entry.statuses.push(submission.status);
    if (submission.status === 202 && submission.turnId) {
      entry.turnIds.add(submission.turnId.toLowerCase());
    }
    answers.set(key, entry);
  }
  const counts = {
    acknowledged: 0,
    foundOnce: 0,
    lost: 0,
    duplicated: 0,
    refused: 0,
    refusedWritten: 0,
    unanswered: 0,
    unansweredWritten: 0,
  };
  for (const [key, entry] of answers) {
    const stored = (byEventId.get(key) ?? []).filter((event) => STARTS.has(event.type));
    const streamId = key.slice(0, key.indexOf('/'));
    const acknowledged = entry.statuses.includes(202);
    const refusedOnly = entry.statuses.every((status) => status >= 400 && status < 500);
    if (acknowledged) {
      counts.acknowledged += 1;
      const refusals = entry.statuses.filter((s) => s >= 400 && s < 500 && s !== 429);
      if (refusals.length > 0) {
        problems.push(`${key}: answered 202 and also ${refusals.join(', ')}`);
      }
      if (entry.turnIds.size > 1) {
        problems.push(`${key}: 202 answers named ${entry.turnIds.size} different turns`);
      }
      const turnId = [...entry.turnIds][0];
      const turnStarts = turnId ? (turns.get(`${streamId}/${turnId}`)?.starts.length ?? 0) : 0;
      if (stored.length === 0) {
        counts.lost += 1;
        problems.push(`${key}: acknowledged (202) but not in the log`);
      } else if (stored.length > 1 || turnStarts > 1) {
        counts.duplicated += 1;
        problems.push(
          `${key}: acknowledged once, in the log ${Math.max(stored.length, turnStarts)} times`,
        );
      } else {
        counts.foundOnce += 1;
        const storedTurn = turnIdOf(stored[0]);
        if (turnId && storedTurn !== turnId) {
          problems.push(`${key}: the 202 named turn ${turnId}, the log started turn ${storedTurn}`);
        }
      }
    } else if (refusedOnly) {
      counts.refused += 1;
      if (stored.length > 0) {
        counts.refusedWritten += 1;
        problems.push(`${key}: refused (${entry.statuses.join(', ')}) but in the log`);
      }
    } else {
      counts.unanswered += 1;
      if (stored.length > 0) counts.unansweredWritten += 1;
      if (stored.length > 1) {
        counts.duplicated += 1;
        problems.push(`${key}: never acknowledged, in the log ${stored.length} times`);
      }
    }
  }

  // Screens: what was shown at the end is the one narration the log kept.
  for (const { adventureId, turnId, result } of ledger.streams) {
    const key = `${ADVENTURE_PREFIX}${adventureId}/${turnId.toLowerCase()}`;
    const problemsBefore = problems.length;
    const terminal = turns.get(key)?.terminals[0];
    if (result.outcome === 'closed') {
      problems.push(`stream of ${key}: ended without done or error`);
      continue;
    }
    if (result.outcome === 'done') {
      if (terminal?.type !== 'Narrated') {
        problems.push(`stream of ${key}: showed done, the log says ${terminal?.type ?? 'nothing'}`);
        continue;
      }
      const action = terminal.data.action as { id?: string; text?: string } | undefined;
      const doneAction = (result.final as { action?: { id?: string } } | undefined)?.action;
      if (doneAction?.id?.toLowerCase() !== action?.id?.toLowerCase()) {
        problems.push(
          `stream of ${key}: done named action ${doneAction?.id}, the log ${action?.id}`,
        );
      }
      // The chunks since the last reset are the start of the stored narration: the stream stops
      // at a state block's fence, and `done` carries the whole narration. Text of another
      // attempt breaks the prefix.
      const shown = result.text.trim();
      const kept = (action?.text ?? '').trim();
      if (!kept.startsWith(shown)) {
        problems.push(
          `stream of ${key}: the screen showed ${JSON.stringify(clip(shown))}, the log kept ${JSON.stringify(clip(kept))}`,
        );
      }
      const doneText = (result.final as { action?: { text?: string } } | undefined)?.action?.text;
      if (doneText !== undefined && doneText.trim() !== kept) {
        problems.push(
          `stream of ${key}: done carried ${JSON.stringify(clip(doneText))}, the log kept ${JSON.stringify(clip(kept))}`,
        );
      }
    } else if (terminal?.type === 'Narrated') {
      problems.push(`stream of ${key}: showed error, the log says Narrated`);
    }
    if (problems.length > problemsBefore) {
      problems[problems.length - 1] += ` (frames: ${describeFrames(result)})`;
    }
    if (options.attemptMarker) {
      const flags = options.attemptMarker.flags.includes('g')
        ? options.attemptMarker.flags
        : `${options.attemptMarker.flags}g`;
      const marks = new Set(result.text.match(new RegExp(options.attemptMarker.source, flags)));
      if (marks.size > 1) {
        problems.push(
          `stream of ${key}: the screen shows ${marks.size} attempts (${[...marks].join(', ')})`,
        );
      }
    }
  }

  const listed =
    problems.length > MAX_LISTED
      ? [...problems.slice(0, MAX_LISTED), `… and ${problems.length - MAX_LISTED} more`]
      : problems;
  return {
    ...counts,
    submissions: ledger.submissions.length,
    statuses,
    streams: ledger.streams.length,
    events: events.length,
    turns: turns.size,
    terminals,
    problems: listed,
  };
}

/** `player, chunk×3, reset, chunk×6, done {…}`: what a stream sent, in short. */
function describeFrames(result: TurnStreamResult): string {
  const parts: string[] = [];
  let last = '';
  let count = 0;
  const flush = () => {
    if (count > 0) parts.push(count > 1 ? `${last}×${count}` : last);
  };
  for (const frame of result.frames) {
    if (frame.event === last && frame.event === 'chunk') {
      count += 1;
      continue;
    }
    flush();
    last = frame.event;
    count = 1;
    if (frame.event === 'error' || frame.event === 'done') {
      parts.push(`${frame.event} ${clip(JSON.stringify(frame.data))}`);
      count = 0;
    }
  }
  flush();
  return `${parts.join(', ')}; ${result.connections} connection(s)`;
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 80)}…${text.slice(-80)}` : text;
}

/** Throws with every problem and the counts unless the history holds. */
export function expectCleanHistory(report: HistoryReport): void {
  if (report.problems.length === 0) return;
  const { problems, ...counts } = report;
  throw new Error(
    `the history does not hold (${problems.length} problem(s)):\n  - ${problems.join('\n  - ')}\ncounts: ${JSON.stringify(counts)}`,
  );
}
