import {
  adventureStreamId,
  canonicalJson,
  evolveInPlace,
  initialState,
  NotFoundError,
  projectFrom,
  projectorVersion,
  type AdventureState,
  type RecordedAdventureEvent,
} from '@chronicle/adventure';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { toRecorded } from './adventure.command-handler';
import { decodeSnapshot } from './snapshot.codec';

// A replay rebuilds an adventure from its first event and holds the stored ways of reaching the
// projection to it: the snapshot itself (against the rebuild up to the snapshot's version) and
// the path every load takes (snapshot + newer events). The projector is pure and the log is the
// truth, so any difference is a bug — in the projector (it is not deterministic, or it changed
// without a new projectorVersion), in an upcaster, or in a snapshot — and the report names the
// first event where the two stop agreeing, found by folding step by step.

export type ReplayComparison = 'snapshot' | 'stored';

export interface ReplayDifference {
  /** `snapshot`: the stored snapshot vs the rebuild at its version; `stored`: snapshot + newer events vs the rebuild. */
  against: ReplayComparison;
  /** The first stream version after which the two disagree. */
  version: number;
  /** The type of the event at that version. */
  eventType: string;
  /** Where in the projection they first differ, as a dotted path. */
  path: string;
  /** The rebuilt value and the stored one at `path` (JSON, cut to 200 characters). */
  rebuilt: string;
  stored: string;
}

export interface ReplayReport {
  adventureId: string;
  /** Events in the log. */
  events: number;
  projectorVersion: number;
  /** The version of the snapshot compared, or null when this projector version has none. */
  snapshotVersion: number | null;
  equal: boolean;
  differences: ReplayDifference[];
  /** The log itself cannot be folded (an unreadable or refused event). */
  error: { version: number | null; message: string } | null;
  /** Time spent folding the whole log, milliseconds. */
  rebuildMs: number;
}

export class AdventureReplayer {
  constructor(
    private readonly eventStore: EventStoreRepository,
    private readonly snapshots: SnapshotRepository,
  ) {}

  async replay(adventureId: string): Promise<ReplayReport> {
    const streamId = adventureStreamId(adventureId);
    const stored = await this.eventStore.readStream(streamId);
    if (stored.length === 0) throw new NotFoundError(`adventure ${adventureId} not found`);
    const snapshotRow = await this.snapshots.loadSnapshot(streamId, projectorVersion);
    const snapshot = snapshotRow ? decodeSnapshot(snapshotRow.bytes) : null;
    const report: ReplayReport = {
      adventureId,
      events: stored.length,
      projectorVersion,
      snapshotVersion: snapshot ? snapshot.version : null,
      equal: true,
      differences: [],
      error: null,
      rebuildMs: 0,
    };

    let events: RecordedAdventureEvent[];
    let rebuilt: AdventureState;
    let rebuiltAtSnapshot: string | null = null;
    const started = performance.now();
    try {
      events = stored.map(toRecorded);
      rebuilt = initialState();
      if (snapshot && snapshot.version === 0) rebuiltAtSnapshot = canonicalJson(rebuilt);
      for (const event of events) {
        evolveInPlace(rebuilt, event);
        // The fold mutates its draft: take the canonical form at the snapshot's version now.
        if (snapshot && event.version === snapshot.version) {
          rebuiltAtSnapshot = canonicalJson(rebuilt);
        }
      }
    } catch (error) {
      const version = (error as { version?: unknown }).version;
      report.equal = false;
      report.error = {
        version: typeof version === 'number' ? version : null,
        message: error instanceof Error ? error.message : String(error),
      };
      return report;
    }
    report.rebuildMs = performance.now() - started;

    if (snapshot) {
      if (rebuiltAtSnapshot === null) {
        // A snapshot beyond the end of the log: nothing in the log produced it.
        report.differences.push({
          against: 'snapshot',
          version: snapshot.version,
          eventType: '(none)',
          path: 'version',
          rebuilt: String(rebuilt.version),
          stored: String(snapshot.version),
        });
      } else if (rebuiltAtSnapshot !== canonicalJson(snapshot)) {
        const at = firstDifference(JSON.parse(rebuiltAtSnapshot), sortedCopy(snapshot));
        report.differences.push(
          describe('snapshot', at, lastChangeAt(events, snapshot.version, at), events),
        );
      }
      const viaSnapshot = safeProjectFrom(
        snapshot,
        events.filter((event) => event.version > snapshot.version),
      );
      if (canonicalJson(viaSnapshot) !== canonicalJson(rebuilt)) {
        const at = firstDifference(sortedCopy(rebuilt), sortedCopy(viaSnapshot));
        report.differences.push(
          describe('stored', at, firstDivergence(events, snapshot, at), events),
        );
      }
    }
    report.equal = report.differences.length === 0;
    return report;
  }
}

type JsonPath = (string | number)[];

interface Difference {
  path: JsonPath;
  rebuilt: unknown;
  stored: unknown;
}

function sortedCopy(value: unknown): unknown {
  return JSON.parse(canonicalJson(value));
}

/** The first place two JSON values differ, walking keys in sorted order. */
export function firstDifference(a: unknown, b: unknown, path: JsonPath = []): Difference | null {
  if (a === b) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= a.length || i >= b.length) {
        return { path: [...path, i], rebuilt: a[i], stored: b[i] };
      }
      const inner = firstDifference(a[i], b[i], [...path, i]);
      if (inner) return inner;
    }
    return null;
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys) {
      const inner = firstDifference(a[key], b[key], [...path, key]);
      if (inner) return inner;
    }
    return null;
  }
  return canonicalJson(a) === canonicalJson(b) ? null : { path, rebuilt: a, stored: b };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function valueAt(value: unknown, path: JsonPath): string {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return 'undefined';
    at = (at as Record<string | number, unknown>)[key];
  }
  return at === undefined ? 'undefined' : canonicalJson(at);
}

/**
 * The snapshot cannot be folded step by step, only the rebuild can: the event to blame is the
 * last one at or below the snapshot's version that changed the rebuild at the differing path
 * (the snapshot did not take it, or took it differently).
 */
function lastChangeAt(
  events: RecordedAdventureEvent[],
  upTo: number,
  at: Difference | null,
): number {
  if (!at || at.path[0] === 'version') return upTo;
  const draft = initialState();
  let last = valueAt(draft, at.path);
  let changedAt = 0;
  for (const event of events) {
    if (event.version > upTo) break;
    evolveInPlace(draft, event);
    const now = valueAt(draft, at.path);
    if (now !== last) changedAt = event.version;
    last = now;
  }
  return changedAt || upTo;
}

/** Folds the rebuild and the snapshot path side by side; the first version where they part. */
function firstDivergence(
  events: RecordedAdventureEvent[],
  snapshot: AdventureState,
  at: Difference | null,
): number {
  const rebuilt = initialState();
  let stored: AdventureState | null = null;
  for (const event of events) {
    evolveInPlace(rebuilt, event);
    if (event.version < snapshot.version) continue;
    if (stored === null) {
      stored = projectFrom(snapshot, []);
    } else {
      try {
        evolveInPlace(stored, event);
      } catch {
        return event.version;
      }
    }
    // Comparing the differing path first keeps a long log's search cheap; the whole state
    // decides only when that path agrees.
    const differs = at
      ? valueAt(rebuilt, at.path) !== valueAt(stored, at.path)
      : canonicalJson(rebuilt) !== canonicalJson(stored);
    if (differs) return event.version;
  }
  return events.at(-1)?.version ?? 0;
}

function safeProjectFrom(
  snapshot: AdventureState,
  events: RecordedAdventureEvent[],
): AdventureState {
  try {
    return projectFrom(snapshot, events);
  } catch {
    // The snapshot cannot take the newer events: report it as different from the rebuild.
    return { ...snapshot, version: -1 };
  }
}

function describe(
  against: ReplayComparison,
  at: Difference | null,
  version: number,
  events: RecordedAdventureEvent[],
): ReplayDifference {
  const cut = (value: unknown) => {
    const text = value === undefined ? 'undefined' : canonicalJson(value);
    return text.length > 200 ? `${text.slice(0, 199)}…` : text;
  };
  return {
    against,
    version,
    eventType: events.find((event) => event.version === version)?.type ?? '(none)',
    path: at ? readablePath(at.path) : '',
    rebuilt: cut(at?.rebuilt),
    stored: cut(at?.stored),
  };
}

/** A path as a reader names it: a story node by its id, not by the bucket it is kept in. */
function readablePath(path: JsonPath): string {
  const inTree = path[0] === 'nodes' && typeof path[1] === 'number' && path.length > 2;
  return (inTree ? ['nodes', ...path.slice(2)] : path).join('.');
}

/** One line per difference, for the CLI and logs. */
export function formatReplayReport(report: ReplayReport): string {
  if (report.error) {
    return `${report.adventureId}: the log does not fold${report.error.version === null ? '' : ` at version ${report.error.version}`}: ${report.error.message}`;
  }
  if (report.equal) {
    const snap =
      report.snapshotVersion === null ? 'no snapshot' : `snapshot @${report.snapshotVersion}`;
    return `${report.adventureId}: ${report.events} events, ${snap}: equal`;
  }
  return report.differences
    .map(
      (d) =>
        `${report.adventureId}: ${d.against === 'snapshot' ? 'the snapshot' : 'snapshot + newer events'} differs from the rebuild from version ${d.version} (${d.eventType}) at ${d.path}: rebuilt ${d.rebuilt}, stored ${d.stored}`,
    )
    .join('\n');
}
