// The adventure projection: everything a turn, a read or a decision needs, as plain JSON. It is
// snapshotted as jsonb and compared with a fresh replay, so it holds no Map, Set, Date or
// undefined: an absent value is null, and every order that matters is an array's order (jsonb
// keeps array order but not object key order).

import type { NarrativeState, Rejection, StateEvent } from '@chronicle/narrative';
import { SCRIPT_LIMITS } from '@chronicle/scripting';
import type {
  AdventureFields,
  AdventureSettings,
  Lorebook,
  PlayerActionType,
  StoryCard,
} from './adventure.events';
import { initialNarrativeState, type NarrativeCorrection } from './narrative.port';
import { emptyMemoryBank, type MemoryBankState } from './memory.state';
import type { ScriptHookRanData, ScriptRecord } from './script.events';
import type { ScriptStateRecord } from './script-state.store';
import type { NarrationFailureCode } from './narration-failure';
import { emptyRoom, type RoomState } from './room.state';
import { emptyTurns, type TurnsState } from './round.state';

/**
 * Bump when the projection's shape or the fold's meaning changes: snapshots are keyed by it, so
 * old snapshots are ignored and rebuilt from the log. 3: snapshots are stored by version. 4: the
 * story tree is a NodeTable of buckets. 5: a turn's outcome keeps its failure code, settings
 * carry `historyMode` (an old snapshot has none, and would narrate an old adventure with the new
 * default), imported lorebooks (`lorebooks`) and scenario scripts (`scripts`). All four landed in
 * parallel under one bump. 6: AI nodes keep the cards whose timed effects their prompt started
 * (`timedLore`); script states are records that patch one another (`scriptStateRecords`), and
 * settings carry the scripts' context mode and limits (both landed together). 7: memories keep
 * the actions they were written from (`sourceActionIds`). 8: cards a script added have a home
 * node and are parked off its path (`scriptCardHomes`, `parkedCards`). 9: a capacity eviction
 * no longer forgets (the bank keeps every memory). 10: the turn in flight holds the state events
 * its player's text carried (`inFlight.playerEvents`, the referee's, now the decider's), read
 * from `playerTextEvents`. 11: the room (`room`: members, invites, bans) and the room settings
 * (`turnPolicy`, `idleTimeoutSeconds`, `roundTimeoutSeconds`, `perPlayerDailyTokens`).
 * 12: rooms' turns: the turn in flight lists every action it answers (`inFlight.actionIds`),
 * and `turns` holds the held actions, the open round, who is away, the hot-seat's place and
 * each room action's actor. How a
 * snapshot is written is the codec's own (adventure-store's snapshot.codec.ts): a snapshot of
 * another codec reads as none, with no bump here.
 */
export const projectorVersion = 12;

export type NodeType = 'start' | PlayerActionType | 'ai';

/** One action in the story tree. Its text lives in the event at `textVersion`. */
export interface ActionNode {
  id: string;
  parentId: string | null;
  /** Position along a path: the opening is 0, each child is its parent + 1. */
  depth: number;
  type: NodeType;
  /** Token count of the current text, in the adventure's encoding. */
  tokens: number;
  /** Stream version of the event holding the current text (creation, or the latest edit). */
  textVersion: number;
  erased: boolean;
  /** The turn that wrote the node; null for the opening. */
  turnId: string | null;
  /** AI nodes: the refereed state block. Empty on other nodes. */
  accepted: StateEvent[];
  rejected: Rejection[];
  /** Indexes into `accepted` withdrawn by a retcon, ascending. */
  retconned: number[];
  /** Corrections anchored on this node, in the order they were made. */
  corrections: NarrativeCorrection[];
  /**
   * AI nodes: the story cards whose sticky or cooldown started with this narration's prompt
   * (its context manifest's `timedLore`); later turns on a path through it read them back.
   */
  timedLore: string[];
}

/** One node on the path at the head, as a prompt needs it (no text: read it by version). */
export interface PathEntry {
  id: string;
  type: NodeType;
  tokens: number;
  textVersion: number;
  turnId: string | null;
  erased: boolean;
}

export type TurnKind = 'action' | 'retry' | 'continue';

export interface TurnInFlight {
  turnId: string;
  kind: TurnKind;
  /** The player action written for this turn (the last, when it wrote several); null for continue and retry. */
  actionId: string | null;
  /**
   * Every player action the turn answers, oldest first: the one it wrote, a closed round's or
   * the held ones (`PlayersActed`), or, for a retry, those the replaced take answered.
   */
  actionIds: string[];
  /** The take a retry replaces: excluded from every read of the story while in flight. */
  replacesActionId: string | null;
  /** Stream version of the event that started the turn. */
  requestedAtVersion: number;
  /**
   * The state events the player's text of this turn carried (`playerActionsOfTurn`, read from
   * `playerTextEvents`; nearly always none). The referee refuses a model's event that repeats
   * one: the player cannot report state through a model that echoes them. Held here so the
   * decider judges a narration with no text read.
   */
  playerEvents: StateEvent[];
}

/** `stopped`: a script stopped the turn before the model was called (`error` holds its message). */
export type TurnOutcomeStatus = 'done' | 'failed' | 'cancelled' | 'stopped';

export interface TurnOutcome {
  turnId: string;
  status: TurnOutcomeStatus;
  /** The AI action written when done. */
  actionId: string | null;
  error: string | null;
  /** Why it failed or was cancelled, as NarrationFailed's stable code; null when done. */
  code: NarrationFailureCode | null;
}

/** How many finished turns keep their outcome in the projection (newest last). */
export const RECENT_TURNS_KEPT = 100;

export interface LastContext {
  turnId: string;
  actionId: string;
  /** Stream version of the Narrated event that carried it. */
  version: number;
  manifest: Record<string, unknown>;
}

export interface AdventureState {
  /** Stream version of the last event folded in; 0 before the adventure exists. */
  version: number;
  id: string | null;
  ownerId: string | null;
  fields: AdventureFields;
  placeholders: Record<string, string>;
  settings: AdventureSettings;
  /** In the order they were added: the lore section lists them in this order. */
  cards: StoryCard[];
  /** Imported lore files' own fields, oldest first (cards name theirs in `origin.bookId`). */
  lorebooks: Lorebook[];
  /** The story tree: read it with `nodeOf` and `allNodes` (see NodeTable). */
  nodes: NodeTable;
  openingId: string | null;
  head: string | null;
  /** Heads that undo left, newest last; redo pops. Cleared when a new action is written. */
  redo: string[];
  /** The head's ancestor chain, root first, erased nodes flagged: path[d] is the node at depth d. */
  path: PathEntry[];
  /** The narrative state at the head. */
  narrative: NarrativeState;
  /**
   * The narrative state at the head's parent: what a retry of the head starts from. null when
   * an undo left it unknown; it is refolded when a retry or a change at the head needs it, so an
   * undo costs O(1) instead of a fold of the whole path.
   */
  narrativeAtParent: NarrativeState | null;
  inFlight: TurnInFlight | null;
  /**
   * The state events a player's text carries (an action's, or the opening's), by action id:
   * only the texts that carry any are here, which is nearly none. Texts live in the events, not
   * the projection; this is what the turn in flight needs of them (`inFlight.playerEvents`).
   */
  playerTextEvents: Record<string, StateEvent[]>;
  recentTurns: TurnOutcome[];
  lastContext: LastContext | null;
  /** Memories, summary versions and their cursors (memory.projector.ts). */
  memory: MemoryBankState;
  /** Scenario scripts in run order (script.projector.ts). */
  scripts: ScriptRecord[];
  /**
   * Script states by the story node that recorded them, then by script: a record id in
   * `scriptStateRecords` (read them with scriptStateAtHead; script-state.store.ts says why).
   */
  scriptStates: Record<string, Record<string, string>>;
  /** Every script state recorded, whole or as a patch of another (script-state.store.ts). */
  scriptStateRecords: Record<string, ScriptStateRecord>;
  /** The newest hook runs (SCRIPT_RUNS_KEPT), newest last: the scripts' logs route. */
  scriptRuns: ScriptHookRanData[];
  /** Each card a script added, by id: the story node whose turn added it (script-cards.projector.ts). */
  scriptCardHomes: Record<string, string>;
  /** Cards a script added whose home is off the path at the head: kept to come back, never read. */
  parkedCards: StoryCard[];
  /** Who shares the adventure: members (the owner is the host), invites, bans (room.state.ts). */
  room: RoomState;
  /** A room's turn policy bookkeeping (round.state.ts); empty in a one-player adventure. */
  turns: TurnsState;
}

// The story tree grows by two nodes a turn and a projection is never changed in place (see the
// projector), so one record of every node would be copied whole by every append: 3.5 ms a fold
// at 10,000 nodes, four folds a turn. The nodes are kept in NODE_BUCKETS records instead, the
// bucket chosen by a hash of the id, and an append copies the list of buckets and the buckets
// it writes: about 1/64 of the tree each.

/** The story tree's nodes by id, spread over NODE_BUCKETS records by `nodeBucket`. */
export type NodeTable = Record<string, ActionNode>[];

export const NODE_BUCKETS = 64;

/** The bucket of `id`: a hash of its last eight characters (a uuid's are random). */
export function nodeBucket(id: string): number {
  let hash = 0;
  for (let at = Math.max(0, id.length - 8); at < id.length; at++) {
    hash = (Math.imul(hash, 31) + id.charCodeAt(at)) | 0;
  }
  return (hash ^ (hash >>> 7)) & (NODE_BUCKETS - 1);
}

export function emptyNodeTable(): NodeTable {
  return Array.from({ length: NODE_BUCKETS }, () => ({}));
}

/** The node `id` of the story tree, or undefined when there is none. */
export function nodeOf(state: Pick<AdventureState, 'nodes'>, id: string): ActionNode | undefined {
  const bucket = state.nodes[nodeBucket(id)];
  return Object.prototype.hasOwnProperty.call(bucket, id) ? bucket[id] : undefined;
}

/** A node the projection holds by construction (on the path, a turn's narration): a missing one is a bug. */
export function requireNode(state: Pick<AdventureState, 'nodes'>, id: string): ActionNode {
  const node = nodeOf(state, id);
  if (!node) throw new Error(`the projection has no action ${id}`);
  return node;
}

/** Every node of the story tree, in no particular order. */
export function* allNodes(state: Pick<AdventureState, 'nodes'>): Generator<ActionNode> {
  for (const bucket of state.nodes) {
    for (const id in bucket) yield bucket[id];
  }
}

/**
 * The projection as readers outside a process see it (an API answer, an audit): the story tree as
 * one record by node id. The buckets are how folds share the tree, not part of what it means.
 */
export type ProjectionView = Omit<AdventureState, 'nodes'> & { nodes: Record<string, ActionNode> };

export function projectionView(state: AdventureState): ProjectionView {
  const nodes: Record<string, ActionNode> = {};
  for (const node of allNodes(state)) nodes[node.id] = node;
  return { ...state, nodes };
}

/** The predecessor's defaults, so an adventure moved here plays as it did there. */
export const DEFAULT_SETTINGS: Readonly<AdventureSettings> = Object.freeze({
  model: '',
  apiMode: 'chat',
  temperature: 0.8,
  maxOutputTokens: 800,
  contextTokenBudget: 16384,
  reasoningMaxTokens: 0,
  encoding: 'cl100k_base',
  historyMode: 'stable',
  autoSummarize: false,
  memoryBankEnabled: false,
  memoryTopK: 5,
  memoryCapacity: 80,
  contextHookMode: 'full',
  scriptHookTimeoutMs: SCRIPT_LIMITS.hookTimeoutMs,
  scriptTurnBudgetMs: SCRIPT_LIMITS.turnBudgetMs,
  scriptMemoryLimitMb: SCRIPT_LIMITS.memoryLimitMb,
  turnPolicy: 'free',
  idleTimeoutSeconds: 300,
  roundTimeoutSeconds: 0,
  perPlayerDailyTokens: 0,
});

export function emptyFields(): AdventureFields {
  return {
    title: '',
    plotEssentials: '',
    authorsNote: '',
    aiInstructions: '',
    persona: { name: '', pronouns: '', description: '' },
    canon: { rules: [], forbiddenStatusChanges: [] },
  };
}

export function initialState(): AdventureState {
  return {
    version: 0,
    id: null,
    ownerId: null,
    fields: emptyFields(),
    placeholders: {},
    settings: { ...DEFAULT_SETTINGS },
    cards: [],
    lorebooks: [],
    nodes: emptyNodeTable(),
    openingId: null,
    head: null,
    redo: [],
    path: [],
    narrative: initialNarrativeState(),
    narrativeAtParent: initialNarrativeState(),
    inFlight: null,
    playerTextEvents: {},
    recentTurns: [],
    lastContext: null,
    memory: emptyMemoryBank(),
    scripts: [],
    scriptStates: {},
    scriptStateRecords: {},
    scriptRuns: [],
    scriptCardHomes: {},
    parkedCards: [],
    room: emptyRoom(),
    turns: emptyTurns(),
  };
}
