// Stored events are never rewritten: an event written under an older schema version is brought
// to today's shape on read, one version step at a time. A step is a pure function of `data`
// alone, so a replay of the same log always reads the same events.

import { EVENT_SCHEMA_VERSIONS } from './event.catalogue';
import { failureCodeOfMessage } from './narration-failure';

/** Turns `data` written at version N into the shape of version N + 1. */
export type UpcastStep = (data: unknown) => unknown;

/** steps[type][N] upcasts `type` from version N to N + 1. */
export type UpcastSteps = Readonly<Record<string, Readonly<Record<number, UpcastStep>>>>;

export class UnreadableEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableEventError';
  }
}

export interface UpcasterRegistry {
  readonly currentVersions: Readonly<Record<string, number>>;
  /** `data` in the current shape of `type`; throws UnreadableEventError when it cannot be. */
  upcast(type: string, schemaVersion: number, data: unknown): unknown;
}

/**
 * Builds a registry and checks it is complete: every type whose current version is above 1 must
 * have a step from each older version, so a forgotten upcaster fails at start-up, not on the
 * first old event read in production.
 */
export function createUpcasterRegistry(
  currentVersions: Readonly<Record<string, number>>,
  steps: UpcastSteps,
): UpcasterRegistry {
  for (const [type, current] of Object.entries(currentVersions)) {
    for (let version = 1; version < current; version++) {
      if (typeof steps[type]?.[version] !== 'function') {
        throw new Error(
          `upcaster missing: ${type} v${version} → v${version + 1}; register it in event.upcaster.ts`,
        );
      }
    }
  }
  for (const type of Object.keys(steps)) {
    if (!(type in currentVersions)) {
      throw new Error(`upcaster registered for unknown event type ${type}`);
    }
  }
  return {
    currentVersions,
    upcast(type, schemaVersion, data) {
      const current = currentVersions[type];
      if (current === undefined) {
        throw new UnreadableEventError(`unknown event type ${JSON.stringify(type)}`);
      }
      if (!Number.isInteger(schemaVersion) || schemaVersion < 1) {
        throw new UnreadableEventError(`${type}: schema version ${schemaVersion} is not valid`);
      }
      if (schemaVersion > current) {
        // Written by a newer build: reading it with this projector would silently drop fields.
        throw new UnreadableEventError(
          `${type} v${schemaVersion} is newer than this build reads (v${current}); upgrade`,
        );
      }
      let upcasted = data;
      for (let version = schemaVersion; version < current; version++) {
        upcasted = steps[type][version](upcasted);
      }
      return upcasted;
    },
  };
}

/**
 * The adventure stream's upcasters: add a step here when a version in EVENT_SCHEMA_VERSIONS is
 * bumped.
 */
export const ADVENTURE_UPCAST_STEPS: UpcastSteps = {
  MemoryWritten: {
    // v1 recorded a worker memory's source depths and anchor, not its actions: `null` says "not
    // recorded", and the projection finds them on the anchor's line (a hand-written memory,
    // with no depths, has none).
    1: (data) => {
      const written = data as { sourceStart?: unknown };
      return { ...written, sourceActionIds: written.sourceStart == null ? [] : null };
    },
  },
  SummaryWritten: {
    // v1 had no chapters: every version then was written from memories, raw story or by hand.
    1: (data) => ({ ...(data as object), chapterIds: [] }),
  },
  AdventureCreated: {
    // v1 had no `settings.historyMode`: those adventures were narrated with the seed's sliding
    // window, and keep it so that every prompt in their log rebuilds to the same bytes.
    1: (data) => {
      const created = data as { settings?: Record<string, unknown> };
      return { ...created, settings: { historyMode: 'sliding', ...created.settings } };
    },
  },
  NarrationFailed: {
    // v1 `{turnId, error, attempts}` → v2 `{turnId, message, attempts}`: the plain message the
    // player sees, named as the turn stream's `error {message}` frame names it.
    1: (data) => {
      const { error, ...rest } = data as { error?: unknown };
      return { ...rest, message: typeof error === 'string' ? error : String(error ?? '') };
    },
    // v2 → v3 `{turnId, code, message, attempts}`: the code the message of that release stood
    // for (its messages were fixed texts, told apart by their words), `internal` when none fits.
    2: (data) => {
      const { message } = data as { message?: unknown };
      return { ...(data as object), code: failureCodeOfMessage(String(message ?? '')) };
    },
  },
};

export const adventureUpcasters = createUpcasterRegistry(
  EVENT_SCHEMA_VERSIONS,
  ADVENTURE_UPCAST_STEPS,
);

export function upcast(type: string, schemaVersion: number, data: unknown): unknown {
  return adventureUpcasters.upcast(type, schemaVersion, data);
}
