/* eslint-disable max-lines -- the projector's switch and the tree updates only it makes, which must stay together to stay in step */
// Folds an adventure's events into its projection (`AdventureState`): the fast form of the
// plain `evolve` in adventure.evolve.ts, which says what each event means and which a property
// spec holds this fold equal to (libs/adventure-store's projection.property.spec.ts). A change
// to what an event means is made there first, then here.
//
// Cost: a rebuild of a long adventure must cost less than reading its rows, so each event costs
// O(1) apart from head moves, erases, retcons and corrections below the head, which refold the
// path (O(depth)). To get there without giving up purity, `projectFrom` copies the state's
// top-level containers once and `evolveInPlace` then mutates only those containers: nested values (nodes,
// path entries, narrative states, arrays inside nodes) are always replaced, never changed, so
// the input state stays untouched: one copy for the whole fold.
//
// The story tree is the one container that grows without bound, so it is copied by the bucket
// (see NodeTable), on the first write to each: a copy made by `ownContainers` remembers which
// buckets it still shares with its source (`sharedBuckets`), and `putNode` copies one of those
// before writing to it. A state `evolveInPlace` is handed without such a record (a decoded
// snapshot, `initialState()`) is its caller's own, buckets included.
//
// The card list is shared the same way, whole: most events leave it alone, and a list that stays
// the same array from turn to turn lets the prompt's lore find its compiled book by identity
// (turn-context's contextCardsOf, libs/context's compileLore) instead of compiling it again.
// A copy's card list is its source's until `ownCards` copies it, before the first write.
//
// An event type this projector does not know is an error, not a no-op: a projection that skipped
// an event would differ from the one its writer saw, and a replay would report it as equal.

import type { NarrativeState, NarrativeTurn, StateEvent } from '@chronicle/narrative';
import type { AdventureEvent, RecordedAdventureEvent, StoryCard } from './adventure.events';
import type { MemoryEvent } from './memory.events';
import type { ScriptEvent } from './script.events';
import {
  DEFAULT_SETTINGS,
  RECENT_TURNS_KEPT,
  initialState,
  nodeBucket,
  nodeOf,
  requireNode,
  type ActionNode,
  type AdventureState,
  type PathEntry,
  type TurnOutcome,
} from './adventure.state';
import {
  applyNarrativeTurn,
  applyNarrativeTurns,
  contribution,
  hasContribution,
  initialNarrativeState,
  stateEventsIn,
} from './narrative.port';
import { playerActionsOfTurn } from './adventure.queries';
import { isMemoryEvent, isRoomEvent, isScriptEvent, turnRoleOf } from './event.catalogue';
import type { RoomEvent } from './room.events';
import { evolveRoom } from './room.projector';
import { roomOfOwner } from './room.state';
import { evolveMemory, withdrawCovering } from './memory.projector';
import { evolveScripts, shareScriptTables } from './script.projector';
import { actionsAnswered, noteTurns } from './round.projector';
import {
  dropParkedCards,
  followPath,
  forgetScriptCards,
  homeScriptCard,
} from './script-cards.projector';

export class ProjectionError extends Error {
  constructor(
    message: string,
    readonly version: number,
  ) {
    super(`event at version ${version}: ${message}`);
    this.name = 'ProjectionError';
  }
}

/** The buckets of a copy's story tree that are still its source's (see the file comment). */
const sharedBuckets = new WeakMap<AdventureState, Set<AdventureState['nodes'][number]>>();

/** The copies whose card list is still their source's (see the file comment). */
const sharedCards = new WeakSet<AdventureState>();

/** A copy whose top-level containers may be mutated without touching `state`. */
function ownContainers(state: AdventureState): AdventureState {
  const copy = {
    ...state,
    nodes: state.nodes.slice(),
    path: state.path.slice(),
    redo: state.redo.slice(),
    lorebooks: state.lorebooks,
    recentTurns: state.recentTurns.slice(),
  };
  sharedBuckets.set(copy, new Set(state.nodes));
  sharedCards.add(copy);
  shareScriptTables(state);
  return copy;
}

/** The draft's card list, its own to mutate: copied once if still its source's. */
function ownCards(draft: AdventureState): StoryCard[] {
  if (sharedCards.delete(draft)) draft.cards = draft.cards.slice();
  return draft.cards;
}

/**
 * `playerTextEvents` after an action's text is written: the state events the text carries kept,
 * or an edited text's forgotten. The same record when nothing changes, which is nearly always.
 */
function playerTextEventsAfter(
  record: Record<string, StateEvent[]>,
  actionId: string,
  text: string,
): Record<string, StateEvent[]> {
  const events = stateEventsIn(text);
  const known = Object.prototype.hasOwnProperty.call(record, actionId);
  if (events.length === 0 && !known) return record;
  const next = { ...record };
  if (events.length === 0) delete next[actionId];
  else next[actionId] = events;
  return next;
}

/**
 * What the player's text of the turn in flight carried (`TurnInFlight.playerEvents`), read once
 * the turn has started.
 */
function playerEventsOfTurn(
  state: Pick<AdventureState, 'path' | 'inFlight' | 'playerTextEvents'>,
): StateEvent[] {
  const texts = state.playerTextEvents;
  // The common adventure: no player ever typed a state event.
  if (Object.keys(texts).length === 0) return [];
  return playerActionsOfTurn(state).flatMap((entry) => texts[entry.id] ?? []);
}

/**
 * After `event`, once the path is where it leaves it (both folds): the state events a text it
 * writes carries are kept (`playerTextEvents`), and a turn it starts (the catalogue's `starts`)
 * reads what its player's text carried on the path it starts on (`inFlight.playerEvents`).
 * Replaces the two fields, never changes them.
 */
export function notePlayerText(
  state: Pick<AdventureState, 'path' | 'inFlight' | 'playerTextEvents'>,
  event: RecordedAdventureEvent,
): void {
  const written = textWritten(event);
  if (written) state.playerTextEvents = playerTextEventsAfter(state.playerTextEvents, ...written);
  if (turnRoleOf(event)?.role === 'starts' && state.inFlight) {
    state.inFlight = { ...state.inFlight, playerEvents: playerEventsOfTurn(state) };
  }
}

/**
 * The action and the text an event writes: the opening, a player's action, an edit (of any
 * action: an edited narration's events are kept too, though only player actions are read back).
 */
function textWritten(event: RecordedAdventureEvent): [string, string] | null {
  switch (event.type) {
    case 'AdventureCreated':
      return [event.data.openingAction.id, event.data.opening];
    case 'PlayerActed':
      return event.data.action ? [event.data.action.id, event.data.action.text] : null;
    case 'ActionEdited':
      return [event.data.actionId, event.data.text];
    default:
      return null;
  }
}

function putNode(draft: AdventureState, node: ActionNode): void {
  const index = nodeBucket(node.id);
  let bucket = draft.nodes[index];
  const shared = sharedBuckets.get(draft);
  if (shared?.delete(bucket)) {
    bucket = { ...bucket };
    draft.nodes[index] = bucket;
  }
  bucket[node.id] = node;
}

/** The projection after `events`, folded from the empty adventure. */
export function project(events: Iterable<RecordedAdventureEvent>): AdventureState {
  return projectFrom(initialState(), events);
}

/** The projection after `events`, folded onto a snapshot (which is left untouched). */
export function projectFrom(
  snapshot: AdventureState,
  events: Iterable<RecordedAdventureEvent>,
): AdventureState {
  const draft = ownContainers(snapshot);
  for (const event of events) evolveInPlace(draft, event);
  return draft;
}

/** Decided events as they are recorded when appended to `state`: numbered on from its version. */
export function recordedAfter(
  state: AdventureState,
  events: readonly AdventureEvent[],
): RecordedAdventureEvent[] {
  return events.map(
    (event, i) =>
      ({
        type: event.type,
        data: event.data,
        version: state.version + i + 1,
      }) as RecordedAdventureEvent,
  );
}

/** The projection after decided events are appended to `state`. */
export function projectDecided(
  state: AdventureState,
  events: readonly AdventureEvent[],
): AdventureState {
  return projectFrom(state, recordedAfter(state, events));
}

/** A node as the path at the head lists it (no text: a reader loads it by `textVersion`). */
export function pathEntry(node: ActionNode): PathEntry {
  return {
    id: node.id,
    type: node.type,
    tokens: node.tokens,
    textVersion: node.textVersion,
    turnId: node.turnId,
    erased: node.erased,
  };
}

function nodeAt(state: AdventureState, id: string, version: number): ActionNode {
  const node = nodeOf(state, id);
  if (!node) throw new ProjectionError(`unknown action ${id}`, version);
  return node;
}

export function isOnPath(state: AdventureState, actionId: string): boolean {
  const node = nodeOf(state, actionId);
  return node !== undefined && state.path[node.depth]?.id === actionId;
}

/** The contributions of the path's nodes at depths `from` to `to` (inclusive), in order. */
function contributions(state: AdventureState, from: number, to: number): NarrativeTurn[] {
  const turns: NarrativeTurn[] = [];
  for (let depth = Math.max(0, from); depth <= to && depth < state.path.length; depth++) {
    const node = requireNode(state, state.path[depth].id);
    if (hasContribution(node)) turns.push(contribution(node));
  }
  return turns;
}

/**
 * Refolds the narrative state along the path: the state at the head and at its parent. The
 * path up to the parent folds into one draft (see `applyNarrativeTurns`), the head onto that.
 */
function refoldNarrative(draft: AdventureState): void {
  const last = draft.path.length - 1;
  const atParent = applyNarrativeTurns(contributions(draft, 0, last - 1));
  const head = last >= 0 ? requireNode(draft, draft.path[last].id) : undefined;
  draft.narrative =
    head && hasContribution(head) ? applyNarrativeTurn(atParent, contribution(head)) : atParent;
  draft.narrativeAtParent = atParent;
}

/** The narrative state at the path's node at `depth` (its own contribution included). */
export function narrativeAtDepth(state: AdventureState, depth: number): NarrativeState {
  return applyNarrativeTurns(contributions(state, 0, depth));
}

/** The state at the head's parent, refolded when an undo left it unknown. */
function ensureAtParent(draft: AdventureState): NarrativeState {
  draft.narrativeAtParent ??= narrativeAtDepth(draft, draft.path.length - 2);
  return draft.narrativeAtParent;
}

/** Rebuilds the path for a new head (walking parent pointers) and refolds the narrative. */
function moveHead(draft: AdventureState, headId: string, version: number): void {
  // Walk up only until the walk meets the current path; the stretch above is shared.
  const stretch: PathEntry[] = [];
  let node: ActionNode | undefined = nodeAt(draft, headId, version);
  while (node && draft.path[node.depth]?.id !== node.id) {
    stretch.push(pathEntry(node));
    node = node.parentId === null ? undefined : nodeAt(draft, node.parentId, version);
  }
  const shared = node ? draft.path.slice(0, node.depth + 1) : [];
  const chain = stretch.length > 0 ? shared.concat(stretch.reverse()) : shared;
  const from = draft.path;
  draft.head = headId;
  draft.path = chain;
  // Moving down from the old head (redo, or stepping forward to a descendant) only folds the
  // new stretch; any other move refolds the path from the root.
  const descends = from.length > 0 && chain[from.length - 1]?.id === from[from.length - 1].id;
  const ascends = chain.length < from.length && from[chain.length - 1]?.id === headId;
  if (descends && chain.length > from.length) {
    const last = chain.length - 1;
    const atParent =
      last > from.length
        ? applyNarrativeTurns(contributions(draft, from.length, last - 1), draft.narrative)
        : draft.narrative;
    const head = requireNode(draft, chain[last].id);
    draft.narrative = hasContribution(head)
      ? applyNarrativeTurn(atParent, contribution(head))
      : atParent;
    draft.narrativeAtParent = atParent;
  } else if (
    ascends &&
    draft.narrativeAtParent !== null &&
    noContributionBetween(draft, from, chain.length, from.length - 1)
  ) {
    // Undo: the state at the old head's parent is the state here when nothing between adds to
    // it (the usual stretch is one player action).
    draft.narrative = draft.narrativeAtParent;
    draft.narrativeAtParent = null;
  } else {
    refoldNarrative(draft);
  }
}

function noContributionBetween(
  draft: AdventureState,
  path: PathEntry[],
  fromDepth: number,
  toDepth: number,
): boolean {
  for (let depth = fromDepth; depth < toDepth; depth++) {
    if (hasContribution(requireNode(draft, path[depth].id))) return false;
  }
  return true;
}

/** Writes a node's change through to its path entry, when it is on the path. */
function replaceNode(draft: AdventureState, node: ActionNode): void {
  putNode(draft, node);
  if (draft.path[node.depth]?.id === node.id) draft.path[node.depth] = pathEntry(node);
}

/** The narrative state after a change to one node's contribution. */
function afterContributionChanged(draft: AdventureState, node: ActionNode): void {
  if (node.id === draft.head) {
    // The head's parent state is kept, so the head alone is reapplied.
    draft.narrative = applyNarrativeTurn(ensureAtParent(draft), contribution(node));
  } else if (draft.path[node.depth]?.id === node.id) {
    refoldNarrative(draft);
  }
}

function recordOutcome(draft: AdventureState, outcome: TurnOutcome): void {
  draft.recentTurns.push(outcome);
  if (draft.recentTurns.length > RECENT_TURNS_KEPT) draft.recentTurns.shift();
}

function newNode(
  fields: Pick<ActionNode, 'id' | 'parentId' | 'depth' | 'type' | 'tokens' | 'turnId'>,
  textVersion: number,
  accepted: ActionNode['accepted'] = [],
  rejected: ActionNode['rejected'] = [],
  timedLore: ActionNode['timedLore'] = [],
): ActionNode {
  // One literal with every field in the declared order: a spread of `fields` plus further keys
  // built each node through a chain of map transitions and was the fold's hottest line.
  return {
    id: fields.id,
    parentId: fields.parentId,
    depth: fields.depth,
    type: fields.type,
    tokens: fields.tokens,
    textVersion,
    erased: false,
    turnId: fields.turnId,
    accepted,
    rejected,
    retconned: [],
    corrections: [],
    timedLore,
  };
}

/**
 * The cards whose timed effects a narration's prompt started: the manifest's `timedLore` (the
 * context report's, see libs/context), a list of card ids. A manifest without one (every
 * narration before timed effects, a prompt that started none) started none.
 */
function timedLoreOf(manifest: Record<string, unknown>): string[] {
  const list = manifest.timedLore;
  return Array.isArray(list) && list.every((id) => typeof id === 'string') ? list : [];
}

/** Appends a child of the head and makes it the head: the cheap, common move. */
function appendAtHead(draft: AdventureState, node: ActionNode): void {
  putNode(draft, node);
  // Only shrink when a retry replaces the tip: assigning `length` lets V8 trim the backing
  // store, and the next push then copies the whole path.
  while (draft.path.length > node.depth) draft.path.pop();
  draft.path.push(pathEntry(node));
  draft.head = node.id;
}

/** The events after which the path at the head, or the take a retry replaces, may differ. */
const PATH_EVENTS = new Set<string>([
  'PlayerActed',
  'PlayersActed',
  'RetryRequested',
  'Narrated',
  'NarrationFailed',
  'NarrationCancelled',
  'HeadMoved',
  'TurnStoppedByScript',
]);

/** Mutates `draft`'s top-level fields and containers only (see the file comment). */
export function evolveInPlace(draft: AdventureState, event: RecordedAdventureEvent): void {
  foldEvent(draft, event);
  // Cards a script added follow the story tree (script-cards.projector.ts).
  if (event.type === 'StoryCardAdded' && event.data.source) {
    homeScriptCard(draft, event.data.card.id);
  } else if (PATH_EVENTS.has(event.type)) {
    followPath(draft, (id) => isOnPath(draft, id));
  }
}

// One switch over every event type, so what each event does to the state is read in one place.
function foldEvent(draft: AdventureState, event: RecordedAdventureEvent): void {
  const { version } = event;
  if (version !== draft.version + 1) {
    throw new ProjectionError(
      `expected stream version ${draft.version + 1} (events must be folded in order, without gaps)`,
      version,
    );
  }
  draft.version = version;

  if (isMemoryEvent(event)) evolveMemory(draft, event);
  else if (isScriptEvent(event)) evolveScripts(draft, event);
  else if (isRoomEvent(event)) evolveRoom(draft, event);
  else evolveAdventure(draft, event);
  notePlayerText(draft, event);
  // Which events end a turn is the catalogue's: the turn they name is then no longer in flight.
  const turn = turnRoleOf(event);
  if (turn?.role === 'ends' && draft.inFlight?.turnId === turn.turnId) draft.inFlight = null;
  noteTurns(draft, event);
}

/** The adventure family's events (see the event catalogue). */
// eslint-disable-next-line max-lines-per-function -- one switch over every event type, so what each event does to the state is read in one place
function evolveAdventure(
  draft: AdventureState,
  event: Exclude<RecordedAdventureEvent, MemoryEvent | ScriptEvent | RoomEvent>,
): void {
  const { version } = event;

  switch (event.type) {
    case 'AdventureCreated': {
      const d = event.data;
      if (draft.id !== null) throw new ProjectionError('the adventure already exists', version);
      draft.id = d.adventureId;
      draft.ownerId = d.ownerId;
      draft.room = roomOfOwner(d.ownerId);
      draft.fields = {
        title: d.title,
        plotEssentials: d.plotEssentials,
        authorsNote: d.authorsNote,
        aiInstructions: d.aiInstructions,
        persona: d.persona,
        canon: d.canon,
      };
      draft.placeholders = d.placeholders;
      // Settings added since the event was written (the scripts' mode and limits) read as their
      // defaults, which is how those adventures ran.
      draft.settings = { ...DEFAULT_SETTINGS, ...d.settings };
      ownCards(draft).push(...d.storyCards);
      const opening = newNode(
        {
          id: d.openingAction.id,
          parentId: null,
          depth: 0,
          type: 'start',
          tokens: d.openingAction.tokens,
          turnId: null,
        },
        version,
      );
      draft.openingId = opening.id;
      appendAtHead(draft, opening);
      draft.narrative = initialNarrativeState();
      draft.narrativeAtParent = draft.narrative;
      return;
    }

    case 'AdventureEdited': {
      const { settings, ...fields } = event.data;
      draft.fields = { ...draft.fields, ...fields };
      if (settings) draft.settings = { ...draft.settings, ...settings };
      return;
    }

    case 'StoryCardAdded':
      ownCards(draft).push(event.data.card);
      return;

    case 'StoryCardEdited': {
      const index = draft.cards.findIndex((card) => card.id === event.data.cardId);
      if (index < 0) throw new ProjectionError(`unknown story card ${event.data.cardId}`, version);
      const card: Record<string, unknown> = { ...draft.cards[index], ...event.data.changes };
      // null = back to the default: the optional field goes.
      for (const [key, value] of Object.entries(event.data.changes)) {
        if (value === null) delete card[key];
      }
      ownCards(draft)[index] = card as unknown as StoryCard;
      return;
    }

    case 'StoryCardsImported': {
      const d = event.data;
      if (d.mode === 'replace') {
        const removed = new Set(d.removedCardIds);
        draft.cards = draft.cards.filter((card) => !removed.has(card.id));
        forgetScriptCards(draft, d.removedCardIds);
        dropParkedCards(draft);
      }
      ownCards(draft).push(...d.cards);
      draft.lorebooks = [...draft.lorebooks, d.book];
      return;
    }

    case 'StoryCardRemoved': {
      const index = draft.cards.findIndex((card) => card.id === event.data.cardId);
      if (index < 0) throw new ProjectionError(`unknown story card ${event.data.cardId}`, version);
      ownCards(draft).splice(index, 1);
      forgetScriptCards(draft, [event.data.cardId]);
      return;
    }

    case 'PlayerActed': {
      const { turnId, action } = event.data;
      draft.redo = [];
      draft.inFlight = {
        turnId,
        kind: action ? 'action' : 'continue',
        actionId: action ? action.id : null,
        actionIds: action ? [action.id] : [],
        replacesActionId: null,
        requestedAtVersion: version,
        playerEvents: [],
      };
      if (action) {
        const parent = nodeAt(draft, draft.head ?? '', version);
        const node = newNode(
          {
            id: action.id,
            parentId: parent.id,
            depth: parent.depth + 1,
            type: action.type,
            tokens: action.tokens,
            turnId,
          },
          version,
        );
        appendAtHead(draft, node);
        // A player action adds nothing to the narrative state.
        draft.narrativeAtParent = draft.narrative;
      }
      return;
    }

    case 'PlayersActed': {
      const { turnId, actions } = event.data;
      draft.redo = [];
      draft.inFlight = {
        turnId,
        kind: 'action',
        actionId: actions[actions.length - 1].id,
        actionIds: actions.map((action) => action.id),
        replacesActionId: null,
        requestedAtVersion: version,
        playerEvents: [],
      };
      for (const action of actions) {
        const parent = nodeAt(draft, draft.head ?? '', version);
        const node = newNode(
          {
            id: action.id,
            parentId: parent.id,
            depth: parent.depth + 1,
            type: action.type,
            tokens: action.tokens,
            turnId,
          },
          version,
        );
        appendAtHead(draft, node);
      }
      draft.narrativeAtParent = draft.narrative;
      return;
    }

    // A room's turn bookkeeping (round.projector.ts, after the switch): no story node.
    case 'ActionHeld':
    case 'ActionSubmitted':
    case 'SubmissionWithdrawn':
    case 'PlayerPassed':
    case 'PlayerMarkedAway':
    case 'RoundCloseDue':
    case 'RoundClosed':
      return;

    case 'RetryRequested':
      // The turn's prompt starts from the state at the replaced take's parent.
      ensureAtParent(draft);
      draft.redo = [];
      draft.inFlight = {
        turnId: event.data.turnId,
        kind: 'retry',
        actionId: null,
        actionIds: actionsAnswered((id) => nodeOf(draft, id), event.data.replacesActionId),
        replacesActionId: event.data.replacesActionId,
        requestedAtVersion: version,
        playerEvents: [],
      };
      return;

    case 'Narrated': {
      const d = event.data;
      const replaced = d.replacesActionId ? nodeAt(draft, d.replacesActionId, version) : null;
      const parentId = replaced ? replaced.parentId : draft.head;
      const parent = nodeAt(draft, parentId ?? '', version);
      const node = newNode(
        {
          id: d.action.id,
          parentId: parent.id,
          depth: parent.depth + 1,
          type: 'ai',
          tokens: d.action.tokens,
          turnId: d.turnId,
        },
        version,
        d.accepted,
        d.rejected,
        timedLoreOf(d.contextManifest),
      );
      if (parent.id === draft.head) {
        draft.narrativeAtParent = draft.narrative;
        appendAtHead(draft, node);
        draft.narrative = applyNarrativeTurn(draft.narrativeAtParent, contribution(node));
      } else if (replaced && replaced.id === draft.head) {
        // A retry of the head: the new take starts from the state the old one started from.
        const atParent = ensureAtParent(draft);
        appendAtHead(draft, node);
        draft.narrative = applyNarrativeTurn(atParent, contribution(node));
      } else {
        putNode(draft, node);
        moveHead(draft, node.id, version);
      }
      recordOutcome(draft, {
        turnId: d.turnId,
        status: 'done',
        actionId: node.id,
        error: null,
        code: null,
      });
      draft.lastContext = {
        turnId: d.turnId,
        actionId: node.id,
        version,
        manifest: d.contextManifest,
      };
      return;
    }

    case 'NarrationFailed':
      recordOutcome(draft, {
        turnId: event.data.turnId,
        status: 'failed',
        actionId: null,
        error: event.data.message,
        code: event.data.code,
      });
      return;

    case 'NarrationCancelled':
      recordOutcome(draft, {
        turnId: event.data.turnId,
        status: 'cancelled',
        actionId: null,
        error: 'cancelled',
        code: 'cancelled',
      });
      return;

    case 'HeadMoved': {
      const { from, to, reason } = event.data;
      if (reason === 'undo') draft.redo.push(from);
      else if (reason === 'redo') draft.redo.pop();
      else draft.redo = [];
      moveHead(draft, to, version);
      return;
    }

    case 'ActionEdited': {
      const node = nodeAt(draft, event.data.actionId, version);
      replaceNode(draft, { ...node, tokens: event.data.tokens, textVersion: version });
      withdrawCovering(draft, node.id);
      return;
    }

    case 'ActionErased': {
      const node = { ...nodeAt(draft, event.data.actionId, version), erased: true };
      replaceNode(draft, node);
      if (node.accepted.length > 0) afterContributionChanged(draft, node);
      withdrawCovering(draft, node.id);
      return;
    }

    case 'NarrativeStateCorrected': {
      const { anchorActionId, correction } = event.data;
      const anchor = nodeAt(draft, anchorActionId, version);
      const node = { ...anchor, corrections: [...anchor.corrections, correction] };
      replaceNode(draft, node);
      afterContributionChanged(draft, node);
      return;
    }

    case 'StateEventRetconned': {
      const { actionId, index } = event.data;
      const target = nodeAt(draft, actionId, version);
      if (target.retconned.includes(index)) return;
      const retconned = [...target.retconned, index].sort((a, b) => a - b);
      const node = { ...target, retconned };
      replaceNode(draft, node);
      afterContributionChanged(draft, node);
      return;
    }

    // A cost, not a change to the story: only the version moves.
    case 'ModelUsageRecorded':
      return;

    default: {
      const unknown: { type: string } = event;
      throw new ProjectionError(
        `unknown event type ${JSON.stringify(unknown.type)}; this projector cannot fold it`,
        version,
      );
    }
  }
}
