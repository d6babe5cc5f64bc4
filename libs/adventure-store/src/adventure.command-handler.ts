// Kept whole past 400 lines (eslint's max-lines, which skips comments, counts fewer): load → decide
// → append → retry on a version conflict is one loop, and the resend answers sit at three points of
// it (the loaded state, a refusal, an append that finds the events stored); split, a reader would
// follow one command across files.
import { createHash, randomUUID } from 'node:crypto';
import {
  actionTextFromEvent,
  actionTextsOfEvent,
  adventureStreamId,
  EVENT_SCHEMA_VERSIONS,
  evolveInPlace,
  NotFoundError,
  projectDecided,
  projectFrom,
  recordedAfter,
  projectorVersion,
  initialState,
  isDomainError,
  isTurnResend,
  isTurnStartCommand,
  originalTurnStart,
  readModelsAfter,
  upcast,
  type AdventureState,
  type DecidedEvent,
  type RecordedAdventureEvent,
} from '@chronicle/adventure';
import {
  EventIdReuseError,
  EventStoreRepository,
  SnapshotRepository,
  StreamVersionConflictError,
  type NewEvent,
  type StoredEvent,
} from '@chronicle/event-store';
import { LruCache } from '@chronicle/platform';
import { ActionTextCache } from './action-text.cache';
import { outboxRow } from '@chronicle/queue';
import { inSpan } from '@chronicle/telemetry';
import { decideCommand, type Command } from './adventure.decide';
import { jobsAfter, type JobOrigin } from './adventure.jobs';
import { decodeSnapshot, encodeSnapshot } from './snapshot.codec';

// The adventure as the apps see it: load the projection (snapshot + newer
// events), decide a command against it, append the result at the expected
// version with the jobs it calls for. Every process is stateless — any worker may take any adventure —
// so the in-memory cache below is only a shortcut past re-parsing a snapshot:
// a cached state is always brought up to date from the log before use.

export interface AdventureCommandHandlerOptions {
  /** Save a snapshot when an append crosses a multiple of this many events. */
  snapshotEvery: number;
  /** How many adventures' latest projections each process keeps in memory. */
  cacheSize?: number;
  /**
   * The most the kept projections may weigh together (see projectionWeight), so a cache sized
   * for thousands of young adventures does not hold as many five-thousand-turn ones; undefined:
   * the count alone bounds it.
   */
  cacheWeight?: number;
}

/**
 * A projection's size in the units of its growing parts, about a kilobyte each in memory (a
 * path entry with its node, a card, a memory, a summary version), plus the ten or so every
 * adventure holds whatever its length.
 */
export function projectionWeight(state: AdventureState): number {
  return (
    10 +
    state.path.length +
    state.cards.length +
    state.memory.memories.length +
    state.memory.summaries.length
  );
}

export interface CommandMetadata {
  /** Who asked: a user id, `worker:context`, `worker:memory`, `admin`. */
  actor: string;
  correlationId?: string;
  causationId?: string;
  /** Anything else the log should keep with the events (model, usage, latency, job, attempt). */
  [key: string]: unknown;
}

export interface HandleOptions {
  /**
   * The projection the caller loaded a moment ago (the context worker, at the start of its job;
   * the API, to answer a resend without deciding): the first decision is made on it without
   * loading again. The append at its version proves it current; a conflict, or a refusal (it
   * may be stale), decides again on a fresh load.
   */
  state?: AdventureState;
  /**
   * The fingerprint of the request a turn-starting command's key stands for: the key is then an
   * idempotency key (see turn.idempotency.ts). A resend is answered with the original event
   * (`original`), never a second turn; the same key with another request is a 422. Recorded in
   * the events' metadata as `requestFingerprint`.
   */
  fingerprint?: string;
}

export interface Handled {
  /** The projection after the appended events. */
  state: AdventureState;
  /** What was appended (empty when the decision was a no-op). */
  events: RecordedAdventureEvent[];
  /** True when every event id was already stored: the original append is the answer. */
  duplicate: boolean;
  /** The event that started the turn this request's key already started, upcast: a resend. */
  original?: RecordedAdventureEvent;
}

const CONFLICT_RETRIES = 5;

export type AppendedListener = (adventureId: string, events: RecordedAdventureEvent[]) => void;

/** A uuid derived from a name, for keys and ids that must be the same on every attempt. */
export function deterministicEventId(...parts: string[]): string {
  const hash = createHash('sha1').update(parts.join('\u0000')).digest();
  hash[6] = (hash[6] & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8] & 0x3f) | 0x80; // RFC 4122 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function toRecorded(event: StoredEvent): RecordedAdventureEvent {
  return {
    type: event.type,
    data: upcast(event.type, event.schemaVersion, event.data),
    version: event.version,
  } as RecordedAdventureEvent;
}

/**
 * The ids of the events one command appends: the first is the command's key itself (so the key
 * of a player's action is the id of the event that records it, and a resend is found by it), the
 * rest derive from it.
 */
export function eventIdsFor(key: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    i === 0 ? key : deterministicEventId(key, String(i)),
  );
}

/**
 * The read models' rows for events appended past the handler (a test's or a bench's seeding):
 * every append to an adventure stream must write them, or the log and its read models disagree.
 */
export function readModelsOf(events: readonly DecidedEvent[], before: AdventureState) {
  return readModelsAfter(events, projectDecided(before, events), before);
}

/** Folds stored events onto a state nobody else holds, in place; returns it. */
function foldOnto(state: AdventureState, events: readonly StoredEvent[]): AdventureState {
  for (const event of events) evolveInPlace(state, toRecorded(event));
  return state;
}

export class AdventureCommandHandler {
  private readonly cache: LruCache<string, AdventureState>;
  private readonly snapshotting = new Set<Promise<void>>();
  private readonly appendedListeners: AppendedListener[] = [];
  private readonly texts = new ActionTextCache({
    readActionTexts: (adventureId, entries) => this.readActionTextsFromLog(adventureId, entries),
  });

  constructor(
    private readonly eventStore: EventStoreRepository,
    private readonly snapshots: SnapshotRepository,
    private readonly options: AdventureCommandHandlerOptions,
  ) {
    this.cache = new LruCache({
      capacity: options.cacheSize ?? 256,
      maxWeight: options.cacheWeight,
      weigh: options.cacheWeight === undefined ? undefined : projectionWeight,
    });
  }

  /** The projection at the head of the log, or null when the adventure does not exist. */
  async load(adventureId: string): Promise<AdventureState | null> {
    const streamId = adventureStreamId(adventureId);
    const cached = this.cache.get(adventureId);
    const base = cached ?? (await this.loadSnapshot(streamId, null));
    const newer = await this.eventStore.readStream(streamId, { from: base.version + 1 });
    // Nothing new: the cached state is the head (the cache's get made it the most recent). No
    // caller mutates a state, so it is shared as is, not copied per load.
    if (cached && newer.length === 0) return cached.id === null ? null : cached;
    // A cached state may be held by a caller, so the fold copies it (by the bucket: see the
    // projector); a freshly decoded snapshot belongs to this call alone and is folded in place.
    let state: AdventureState;
    if (cached) {
      const recorded = newer.map(toRecorded);
      state = projectFrom(cached, recorded);
      this.rememberTexts(adventureId, recorded);
    } else {
      state = foldOnto(base, newer);
    }
    if (state.id === null) return null;
    this.remember(adventureId, state);
    // No snapshot under this projector version (a new projector, or snapshots lost): the fold
    // just paid for one, so keep it and the next load starts from here.
    if (newer.length >= this.options.snapshotEvery) this.saveSnapshotAfterAnswer(streamId, state);
    return state;
  }

  /**
   * The projection this process last loaded or wrote for the adventure, without asking the log:
   * it may be behind it (another process appended since). For a question whose answer only a
   * newer event could change, and which the caller settles otherwise when that matters.
   */
  cached(adventureId: string): AdventureState | undefined {
    const state = this.cache.get(adventureId);
    return state?.id === null ? undefined : state;
  }

  /** Like `load`, but a missing adventure is a NotFoundError (404). */
  async get(adventureId: string): Promise<AdventureState> {
    const state = await this.load(adventureId);
    if (!state) throw new NotFoundError(`adventure ${adventureId} not found`);
    return state;
  }

  /**
   * The projection as it was right after `version`: the newest snapshot at or below it (the
   * latest, or a checkpoint; see SnapshotRepository) plus the events up to it. A read that had
   * to fold more than a checkpoint's spacing leaves a checkpoint behind at the last multiple of
   * that spacing, so the next read near there folds at most that many events.
   */
  async loadAt(adventureId: string, version: number): Promise<AdventureState> {
    const streamId = adventureStreamId(adventureId);
    const state = await this.loadSnapshot(streamId, version);
    const every = this.snapshots.checkpointEvery;
    const checkpoint = Math.floor(version / every) * every;
    if (checkpoint > state.version && version - state.version >= every) {
      foldOnto(
        state,
        await this.eventStore.readStream(streamId, { from: state.version + 1, to: checkpoint }),
      );
      if (state.version === checkpoint) await this.saveSnapshot(streamId, state);
    }
    if (state.version < version) {
      foldOnto(
        state,
        await this.eventStore.readStream(streamId, { from: state.version + 1, to: version }),
      );
    }
    if (state.id === null) throw new NotFoundError(`adventure ${adventureId} not found`);
    if (state.version < version) {
      throw new NotFoundError(
        `adventure ${adventureId} has no version ${version}; its latest is ${state.version}`,
      );
    }
    return state;
  }

  /**
   * The one write path: decides `command` against the head (see `decideCommand`), appends the
   * events at the expected version with the jobs they call for (`jobsAfter`) in the outbox of
   * the same statement, and answers with the projection after them. The events' ids derive from
   * the command's key, so a command sent twice appends once (`duplicate`). A version conflict
   * means someone else appended in between (another turn, the memory worker, an edit): reload
   * and decide again, so the second decision sees the first (a second action then gets
   * TurnInFlightError, not a bare conflict).
   */
  async handle(
    adventureId: string,
    command: Command,
    metadata: CommandMetadata,
    options: HandleOptions = {},
  ): Promise<Handled> {
    const streamId = adventureStreamId(adventureId);
    const key = command.key ?? randomUUID();
    const { fingerprint } = options;
    const turnStart = isTurnStartCommand(command) ? { ...command, key } : null;
    const resendOf =
      fingerprint !== undefined && turnStart
        ? (state: AdventureState) => this.resendAnswer(adventureId, key, fingerprint, state)
        : null;
    const recordedMetadata =
      fingerprint === undefined ? metadata : { ...metadata, requestFingerprint: fingerprint };
    for (let attempt = 1; ; attempt++) {
      const known = attempt === 1 ? options.state : undefined;
      const loaded = known ?? (await this.load(adventureId)) ?? initialState();
      if (resendOf && turnStart && isTurnResend(loaded, turnStart)) {
        const answer = await resendOf(loaded);
        if (answer) return answer;
      }
      let events: DecidedEvent[];
      try {
        events = decideCommand(command, loaded);
      } catch (error) {
        // A refusal of a state that may be stale is no answer: decide again on the head.
        if (known) continue;
        // A copy of this request won the race (its turn is in flight, its action exists), or the
        // key names a turn too old for the projection to show, which the decider refused before
        // the append could recognise it: the original is the answer.
        if (resendOf && isRefusal(error)) {
          const answer = await resendOf(loaded);
          if (answer) return answer;
        }
        throw error;
      }
      if (events.length === 0) {
        if (known) continue; // nothing to do is only an answer about the head
        return { state: loaded, events: [], duplicate: false };
      }
      const ids = eventIdsFor(key, events.length);
      // An event recorded elsewhere (an import) keeps its id and its metadata, over the command's.
      const newEvents = events.map((event, i): NewEvent => ({
        id: event.id ?? ids[i],
        type: event.type,
        schemaVersion: EVENT_SCHEMA_VERSIONS[event.type],
        data: event.data,
        metadata: event.metadata ? { ...recordedMetadata, ...event.metadata } : recordedMetadata,
      }));
      const recorded = recordedAfter(loaded, events);
      const state = projectFrom(loaded, recorded);
      try {
        // The append's span: the jobs' rows are made inside it, so their traceparent names it.
        const result = await inSpan(
          `append ${command.type}`,
          { 'chronicle.adventure_id': adventureId, 'chronicle.events': newEvents.length },
          () =>
            this.eventStore.appendToStream(streamId, newEvents, {
              expectedVersion: loaded.version === 0 ? 'no_stream' : loaded.version,
              outbox: jobsAfter(events, state, jobOrigin(metadata)).map(outboxRow),
              readModels: readModelsAfter(events, state, loaded),
            }),
        );
        if (result.duplicate) return await this.duplicateOf(adventureId, resendOf);
        const id = state.id ?? adventureId;
        this.remember(id, state);
        this.rememberTexts(id, recorded);
        this.maybeSnapshot(streamId, loaded.version, state);
        for (const listener of this.appendedListeners) listener(id, recorded);
        return { state, events: recorded, duplicate: false };
      } catch (error) {
        // Some of these ids are stored, not all: the command was appended before with other
        // events (a redelivered narrate job whose hooks made more effects this time, racing the
        // attempt that won). Every id derives from the key, so the key's event being stored
        // means this command is done: the original append is the answer, and nothing new is
        // appended.
        if (error instanceof EventIdReuseError && (await this.eventStore.hasEvent(streamId, key))) {
          return await this.duplicateOf(adventureId, resendOf);
        }
        if (error instanceof StreamVersionConflictError && attempt < CONFLICT_RETRIES) {
          // The caller's state was merely behind: the next load brings the cached one up to date.
          if (!known) this.cache.delete(adventureId);
          continue;
        }
        throw error;
      }
    }
  }

  /** The answer to a command found appended before: the head, and the original of a resend. */
  private async duplicateOf(
    adventureId: string,
    resendOf: ((state: AdventureState) => Promise<Handled | null>) | null,
  ): Promise<Handled> {
    this.cache.delete(adventureId);
    const state = await this.get(adventureId);
    return (await resendOf?.(state)) ?? { state, events: [], duplicate: true };
  }

  /**
   * The original turn-starting event the key names, read from the log and upcast, checked
   * against the request's fingerprint (originalTurnStart: a 422 for another request); null when
   * the key names no turn's start, and the command is decided as any other.
   */
  private async resendAnswer(
    adventureId: string,
    key: string,
    fingerprint: string,
    state: AdventureState,
  ): Promise<Handled | null> {
    const stored = await this.eventStore.readEvent(adventureStreamId(adventureId), key);
    if (!stored) return null;
    const original = originalTurnStart(
      key,
      toRecorded(stored),
      stored.metadata.requestFingerprint,
      fingerprint,
    );
    return original && { state, events: [], duplicate: true, original };
  }

  /**
   * The texts of the given path entries, in the order given: from the texts this process has
   * read or written lately (see ActionTextCache), the rest by the version of the event that
   * holds each one (one indexed query).
   */
  readActionTexts(
    adventureId: string,
    entries: readonly { id: string; textVersion: number }[],
  ): Promise<string[]> {
    return this.texts.readActionTexts(adventureId, entries);
  }

  private async readActionTextsFromLog(
    adventureId: string,
    entries: readonly { id: string; textVersion: number }[],
  ): Promise<string[]> {
    const events = await this.eventStore.readStreamVersions(adventureStreamId(adventureId), [
      ...new Set(entries.map((entry) => entry.textVersion)),
    ]);
    const byVersion = new Map(events.map((event) => [event.version, toRecorded(event)]));
    return entries.map((entry) => {
      const event = byVersion.get(entry.textVersion);
      const text = event ? actionTextFromEvent(event, entry.id) : null;
      if (text === null) {
        throw new Error(
          `adventure ${adventureId}: no text for action ${entry.id} at version ${entry.textVersion}`,
        );
      }
      return text;
    });
  }

  /**
   * Hands the texts of events just folded or appended to the text cache: the newest rows of the
   * next history window. A full fold (a cold load) skips this; its window is read when asked.
   */
  private rememberTexts(adventureId: string, events: readonly RecordedAdventureEvent[]): void {
    const entries: { id: string; textVersion: number; text: string }[] = [];
    for (const event of events) {
      for (const held of actionTextsOfEvent(event)) {
        entries.push({ ...held, textVersion: event.version });
      }
    }
    if (entries.length > 0) this.texts.remember(adventureId, entries);
  }

  /**
   * Calls `listener` after each append this handler makes, with what it appended (the room
   * streams' announcer, append-announcer.ts). It must not throw, nor wait: the append is done.
   */
  whenAppended(listener: AppendedListener): void {
    this.appendedListeners.push(listener);
  }

  /** Forgets the cached projection (after a failed append of unknown outcome, say). */
  forget(adventureId: string): void {
    this.cache.delete(adventureId);
  }

  /** Waits for the snapshots this repository is writing (tests; a shutdown may skip it). */
  async snapshotsWritten(): Promise<void> {
    await Promise.all(this.snapshotting);
  }

  private maybeSnapshot(streamId: string, before: number, state: AdventureState): void {
    const every = this.options.snapshotEvery;
    if (Math.floor(state.version / every) === Math.floor(before / every)) return;
    this.saveSnapshotAfterAnswer(streamId, state);
  }

  /**
   * Writes a snapshot once the command or load that crossed the mark has its answer: encoding a
   * 10,000-node projection takes ~15 ms, which a player's turn should not wait for. The state is
   * never changed, so writing it a tick later writes the same snapshot; one lost to a crash or a
   * shutdown only makes the next load fold longer.
   */
  private saveSnapshotAfterAnswer(streamId: string, state: AdventureState): void {
    const write: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.saveSnapshot(streamId, state))
      .finally(() => this.snapshotting.delete(write));
    this.snapshotting.add(write);
  }

  /**
   * The newest snapshot under this projector version (at or below `atOrBelow` when given),
   * decoded; the empty state when there is none. Either way the result is this caller's own, to
   * fold in place. A snapshot of another projector version or codec is never read: its fold may
   * mean something else, so the log is folded again and a new snapshot written (see `load`).
   */
  private async loadSnapshot(streamId: string, atOrBelow: number | null): Promise<AdventureState> {
    const snapshot =
      atOrBelow === null
        ? await this.snapshots.loadSnapshot(streamId, projectorVersion)
        : await this.snapshots.loadSnapshotAt(streamId, projectorVersion, atOrBelow);
    return (snapshot && decodeSnapshot(snapshot.bytes)) ?? initialState();
  }

  private async saveSnapshot(streamId: string, state: AdventureState): Promise<void> {
    // A snapshot is a shortcut, never the truth: failing to encode or write one costs a
    // longer fold next time and nothing else.
    try {
      await this.snapshots.saveSnapshot(
        streamId,
        projectorVersion,
        state.version,
        encodeSnapshot(state),
      );
    } catch {
      // the next load folds from an older snapshot
    }
  }

  private remember(adventureId: string, state: AdventureState): void {
    this.cache.set(adventureId, state);
  }
}

/** The decider's refusals, which a racing copy of the same request can cause. */
function isRefusal(error: unknown): boolean {
  return (
    isDomainError(error) &&
    (error.kind === 'conflict' || error.kind === 'invalid' || error.kind === 'not_found')
  );
}

/** The request id and receive time a command's metadata carries, for the jobs it causes. */
function jobOrigin(metadata: CommandMetadata): JobOrigin {
  const { correlationId, requestedAt } = metadata;
  return {
    ...(typeof correlationId === 'string' && { requestId: correlationId }),
    ...(typeof requestedAt === 'number' && Number.isFinite(requestedAt) && { requestedAt }),
  };
}
