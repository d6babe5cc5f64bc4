// Every event type of an adventure stream, declared once: the schema version written today, the
// part it plays in a turn, and the model call it records, if any. What used to be a list in each
// place that needed one (the projector's turn bookkeeping, the turn-in-flight read model, the
// outbox's jobs, an import's checks and bounds, the budget's usage) reads it here, so a new event type is
// declared in one line and a missing line does not compile.

import type { AdventureEvent, AdventureEventType } from './adventure.events';
import type { MemoryEvent } from './memory.events';
import type { ModelCallPurpose } from './model-call';
import type { RoomEvent } from './room.events';
import type { ScriptEvent } from './script.events';
import {
  EVENT_CHECKS,
  SCRIPT_SOURCE_BOUNDS,
  SCRIPT_STATE_BOUNDS,
  type EventCheck,
  type JsonBounds,
} from './event.checks';

/**
 * What an event does to the adventure's turn: `starts` one (it is then in flight, and a narrate
 * job follows), `ends` the turn it names (whether narrated, failed, cancelled or stopped by a
 * script), or `neither`. Every `starts` and `ends` event has a `data.turnId`.
 */
export type TurnRole = 'starts' | 'ends' | 'neither';

/** One model call as the budget and the ledger count it. */
export interface ModelCallRecord {
  purpose: ModelCallPurpose;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

type EventOf<T extends AdventureEventType> = Extract<AdventureEvent, { type: T }>;

export interface EventDeclaration<T extends AdventureEventType> {
  /** Bump when `data` changes shape, and register an upcaster from the old one (event.upcaster.ts). */
  schemaVersion: number;
  turn: TurnRole;
  /** Which family's projector folds it. */
  family: 'adventure' | 'memory' | 'script' | 'room';
  /** The model call it records: only the paid ones (the offline narrator costs nothing). */
  usage?: (data: EventOf<T>['data']) => ModelCallRecord | null;
  /** What its data must hold, for an event that arrives already made (an import): event.checks.ts. */
  check?: EventCheck<T>;
  /** How long its strings, how deep and long its lists may be, when not the usual (JsonBounds). */
  bounds?: JsonBounds;
}

type Catalogue = { readonly [T in AdventureEventType]: EventDeclaration<T> };

const NEITHER = { turn: 'neither', family: 'adventure' } as const;
const MEMORY = { turn: 'neither', family: 'memory' } as const;
const SCRIPT = { turn: 'neither', family: 'script' } as const;
const ROOM = { turn: 'neither', family: 'room' } as const;

function record(
  purpose: ModelCallPurpose,
  usage: { model?: string; promptTokens: number; completionTokens: number; cachedTokens?: number },
  model = usage.model ?? '',
): ModelCallRecord {
  return {
    purpose,
    model,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedTokens: usage.cachedTokens ?? 0,
  };
}

export const EVENT_CATALOGUE: Catalogue = {
  AdventureCreated: { ...NEITHER, schemaVersion: 2, check: EVENT_CHECKS.AdventureCreated },
  AdventureEdited: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.AdventureEdited },
  StoryCardAdded: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.StoryCardAdded },
  StoryCardEdited: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.StoryCardEdited },
  StoryCardRemoved: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.StoryCardRemoved },
  StoryCardsImported: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.StoryCardsImported },
  PlayerActed: { ...NEITHER, schemaVersion: 1, turn: 'starts', check: EVENT_CHECKS.PlayerActed },
  RetryRequested: {
    ...NEITHER,
    schemaVersion: 1,
    turn: 'starts',
    check: EVENT_CHECKS.RetryRequested,
  },
  Narrated: {
    ...NEITHER,
    schemaVersion: 1,
    turn: 'ends',
    // A narration written before usage named its model names it in data.model.
    usage: (d) =>
      d.narrator === 'offline' ? null : record('narration', d.usage, d.usage.model ?? d.model),
    check: EVENT_CHECKS.Narrated,
  },
  NarrationFailed: {
    ...NEITHER,
    schemaVersion: 3,
    turn: 'ends',
    check: EVENT_CHECKS.NarrationFailed,
  },
  NarrationCancelled: { ...NEITHER, schemaVersion: 1, turn: 'ends' },
  HeadMoved: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.HeadMoved },
  ActionEdited: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.ActionEdited },
  ActionErased: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.ActionErased },
  NarrativeStateCorrected: {
    ...NEITHER,
    schemaVersion: 1,
    check: EVENT_CHECKS.NarrativeStateCorrected,
  },
  StateEventRetconned: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.StateEventRetconned },
  ModelUsageRecorded: {
    ...NEITHER,
    schemaVersion: 1,
    usage: (d) => record(d.purpose, d.usage),
    check: EVENT_CHECKS.ModelUsageRecorded,
  },
  MemoryWritten: {
    ...MEMORY,
    schemaVersion: 2,
    usage: (d) => (d.usage ? record('memory', d.usage) : null),
    check: EVENT_CHECKS.MemoryWritten,
  },
  MemoryEdited: { ...MEMORY, schemaVersion: 1, check: EVENT_CHECKS.MemoryEdited },
  MemoryPinned: { ...MEMORY, schemaVersion: 1, check: EVENT_CHECKS.MemoryPinned },
  MemoryUnpinned: { ...MEMORY, schemaVersion: 1, check: EVENT_CHECKS.MemoryUnpinned },
  MemoryForgotten: { ...MEMORY, schemaVersion: 1, check: EVENT_CHECKS.MemoryForgotten },
  MemoryDeleted: { ...MEMORY, schemaVersion: 1, check: EVENT_CHECKS.MemoryDeleted },
  MemoriesUsed: { ...MEMORY, schemaVersion: 1, check: EVENT_CHECKS.MemoriesUsed },
  SummaryWritten: {
    ...MEMORY,
    schemaVersion: 2,
    usage: (d) => (d.usage ? record('summary', d.usage) : null),
    check: EVENT_CHECKS.SummaryWritten,
  },
  ChapterWritten: {
    ...MEMORY,
    schemaVersion: 1,
    usage: (d) => (d.usage ? record('summary', d.usage) : null),
    check: EVENT_CHECKS.ChapterWritten,
  },
  ScriptAdded: {
    ...SCRIPT,
    schemaVersion: 1,
    bounds: SCRIPT_SOURCE_BOUNDS,
    check: EVENT_CHECKS.ScriptAdded,
  },
  ScriptEdited: {
    ...SCRIPT,
    schemaVersion: 1,
    bounds: SCRIPT_SOURCE_BOUNDS,
    check: EVENT_CHECKS.ScriptEdited,
  },
  ScriptRemoved: { ...SCRIPT, schemaVersion: 1 },
  ScriptsReordered: { ...SCRIPT, schemaVersion: 1 },
  ScriptStateChanged: {
    ...SCRIPT,
    schemaVersion: 1,
    bounds: SCRIPT_STATE_BOUNDS,
    check: EVENT_CHECKS.ScriptStateChanged,
  },
  ScriptHookRan: { ...SCRIPT, schemaVersion: 1 },
  ScriptMessagePosted: { ...SCRIPT, schemaVersion: 1 },
  // onModelContext stops the turn in flight; onInput stops one before it started (no PlayerActed).
  TurnStoppedByScript: { ...SCRIPT, schemaVersion: 1, turn: 'ends' },
  StoryCardsReordered: { ...SCRIPT, schemaVersion: 1 },
  InviteCreated: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.InviteCreated },
  InviteRevoked: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.InviteRevoked },
  MemberJoined: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.MemberJoined },
  MemberLeft: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.MemberLeft },
  MemberKicked: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.MemberKicked },
  MemberRoleChanged: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.MemberRoleChanged },
  CharacterChanged: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.CharacterChanged },
  RoomHandedOver: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.RoomHandedOver },
  RoomReset: { ...ROOM, schemaVersion: 1, check: EVENT_CHECKS.RoomReset },
  // A room's turns (round.events.ts): a closed round's or the held actions' turn starts one.
  PlayersActed: { ...NEITHER, schemaVersion: 1, turn: 'starts', check: EVENT_CHECKS.PlayersActed },
  ActionHeld: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.ActionHeld },
  ActionSubmitted: { ...NEITHER, schemaVersion: 1, check: EVENT_CHECKS.ActionSubmitted },
  SubmissionWithdrawn: { ...NEITHER, schemaVersion: 1 },
  PlayerPassed: { ...NEITHER, schemaVersion: 1 },
  PlayerMarkedAway: { ...NEITHER, schemaVersion: 1 },
  RoundCloseDue: { ...NEITHER, schemaVersion: 1 },
  RoundClosed: { ...NEITHER, schemaVersion: 1 },
};

export const ADVENTURE_EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as AdventureEventType[];

/** The schema version written for each event type today (from the catalogue). */
export const EVENT_SCHEMA_VERSIONS: Readonly<Record<AdventureEventType, number>> =
  Object.fromEntries(
    ADVENTURE_EVENT_TYPES.map((type) => [type, EVENT_CATALOGUE[type].schemaVersion]),
  ) as Record<AdventureEventType, number>;

export function isAdventureEventType(type: string): type is AdventureEventType {
  return Object.prototype.hasOwnProperty.call(EVENT_CATALOGUE, type);
}

/** The event types whose role in a turn is `role`, for lists in docs and checks. */
export function eventTypesThat(role: Exclude<TurnRole, 'neither'>): AdventureEventType[] {
  return ADVENTURE_EVENT_TYPES.filter((type) => EVENT_CATALOGUE[type].turn === role);
}

/** The turn an event starts or ends, with its role; null for an event outside any turn. */
export function turnRoleOf(
  event: AdventureEvent,
): { role: Exclude<TurnRole, 'neither'>; turnId: string } | null {
  const { turn } = EVENT_CATALOGUE[event.type];
  if (turn === 'neither') return null;
  return { role: turn, turnId: (event.data as { turnId: string }).turnId };
}

/** The paid model call an event records, or null. */
export function modelCallOf(event: AdventureEvent): ModelCallRecord | null {
  const usage = EVENT_CATALOGUE[event.type].usage as
    ((data: AdventureEvent['data']) => ModelCallRecord | null) | undefined;
  return usage ? usage(event.data) : null;
}

export function isMemoryEvent(event: { type: string }): event is MemoryEvent {
  return familyOf(event.type) === 'memory';
}

export function isScriptEvent(event: { type: string }): event is ScriptEvent {
  return familyOf(event.type) === 'script';
}

export function isRoomEvent(event: { type: string }): event is RoomEvent {
  return familyOf(event.type) === 'room';
}

function familyOf(type: string): EventDeclaration<AdventureEventType>['family'] | null {
  return isAdventureEventType(type) ? EVENT_CATALOGUE[type].family : null;
}
