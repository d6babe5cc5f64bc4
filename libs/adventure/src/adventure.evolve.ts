/* eslint-disable max-lines -- the projection's contract, one fold over every event family, read as a whole; split, a reader would chase the meaning of one event across files */
// What an event means for an adventure, stated as simply as it can be: `evolve(state, event)`
// returns a new state and never changes the one it is given; the story tree is one record of
// nodes by id; the path at the head and the narrative states are worked out again from the tree
// after every event; a script's state is kept whole on the node that recorded it. This is the
// projection's contract, and what its specs are written against.
//
// The projector the app runs (adventure.projector.ts) is an optimisation of it: copy-on-write
// containers, the tree in 64 buckets, the path and the narrative moved incrementally, script
// states as patch chains; the snapshot codec and the command handler's cached states sit behind
// it. `plainView` (./testing) reads its state in this form, and a property spec over random
// histories (libs/adventure-store's projection.property.spec.ts) holds it equal to this fold.
//
// The rules a fold shares with the fast projector are the ones already written as functions of
// plain values: the memory bank's (`memoryAfter`, `withdrawnCovering`), the script cards'
// parking (script-cards.projector.ts), a node's narrative contribution (narrative.port.ts) and
// which events end a turn (the event catalogue).

import type { NarrativeState } from '@chronicle/narrative';
import type { RecordedAdventureEvent, StoryCard } from './adventure.events';
import { ProjectionError, notePlayerText, pathEntry } from './adventure.projector';
import {
  DEFAULT_SETTINGS,
  RECENT_TURNS_KEPT,
  emptyFields,
  type ActionNode,
  type AdventureState,
  type TurnOutcome,
} from './adventure.state';
import { isMemoryEvent, isRoomEvent, turnRoleOf } from './event.catalogue';
import { memoryAfter, withdrawnCovering } from './memory.projector';
import { emptyMemoryBank } from './memory.state';
import { applyNarrativeTurns, contribution, initialNarrativeState } from './narrative.port';
import {
  dropParkedCards,
  followPath,
  forgetScriptCards,
  homeScriptCard,
} from './script-cards.projector';
import { SCRIPT_RUNS_KEPT } from './script.events';
import { evolveRoom } from './room.projector';
import { emptyRoom, roomOfOwner } from './room.state';
import { actionsAnswered, noteTurns } from './round.projector';
import { emptyTurns } from './round.state';

/** A script's state by the story node that recorded it, then by script: the state itself. */
export type PlainScriptStates = Record<string, Record<string, Record<string, unknown>>>;

/** The projection as the contract states it (see the file comment). */
export interface PlainAdventureState extends Omit<
  AdventureState,
  'nodes' | 'narrativeAtParent' | 'scriptStates' | 'scriptStateRecords'
> {
  /** The story tree: every node by id. */
  nodes: Record<string, ActionNode>;
  /** The narrative state at the head's parent (the initial state when the head has none). */
  narrativeAtParent: NarrativeState;
  scriptStates: PlainScriptStates;
}

export function initialPlainState(): PlainAdventureState {
  return {
    version: 0,
    id: null,
    ownerId: null,
    fields: emptyFields(),
    placeholders: {},
    settings: { ...DEFAULT_SETTINGS },
    cards: [],
    lorebooks: [],
    nodes: {},
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
    scriptRuns: [],
    scriptCardHomes: {},
    parkedCards: [],
    room: emptyRoom(),
    turns: emptyTurns(),
  };
}

/** The state after `events`, folded from the empty adventure with `evolve`. */
export function plainProject(events: Iterable<RecordedAdventureEvent>): PlainAdventureState {
  let state = initialPlainState();
  for (const event of events) state = evolve(state, event);
  return state;
}

/** The adventure after one more event. `state` is left as it was. */
export function evolve(
  state: PlainAdventureState,
  event: RecordedAdventureEvent,
): PlainAdventureState {
  if (event.version !== state.version + 1) {
    throw new ProjectionError(
      `expected stream version ${state.version + 1} (events must be folded in order, without gaps)`,
      event.version,
    );
  }
  // A shallow copy whose fields the steps below replace, never change: nested values stay shared.
  const next: PlainAdventureState = { ...state, version: event.version };
  const nodeOfState = (id: string) => state.nodes[id];
  if (isMemoryEvent(event)) next.memory = memoryAfter(state.memory, event, nodeOfState);
  else if (isRoomEvent(event)) evolveRoom(next, event);
  else applyEvent(next, event);
  // Which events end a turn is the catalogue's: the turn they name is then no longer in flight.
  const turn = turnRoleOf(event);
  if (turn?.role === 'ends' && next.inFlight?.turnId === turn.turnId) next.inFlight = null;
  noteTurns(next, event);
  derivePath(next);
  notePlayerText(next, event);
  // Cards a script added live on the node whose turn added them, and are parked while it is off
  // the path at the head (script-cards.projector.ts); a card just added is at home at the head.
  if (event.type === 'StoryCardAdded' && event.data.source) {
    homeScriptCard(next, event.data.card.id);
  } else {
    const onPath = new Set(next.path.map((entry) => entry.id));
    followPath(next, (id) => onPath.has(id));
  }
  return next;
}

/** The path from the opening to the head, and the narrative states along it, from the tree. */
function derivePath(next: PlainAdventureState): void {
  const chain: ActionNode[] = [];
  for (let id = next.head; id !== null; id = next.nodes[id].parentId) chain.unshift(next.nodes[id]);
  next.path = chain.map(pathEntry);
  if (chain.length === 0) return;
  next.narrativeAtParent = applyNarrativeTurns(chain.slice(0, -1).map(contribution));
  next.narrative = applyNarrativeTurns(chain.map(contribution));
}

function nodeAt(state: PlainAdventureState, id: string | null, version: number): ActionNode {
  const node = id === null ? undefined : state.nodes[id];
  if (!node) throw new ProjectionError(`unknown action ${id}`, version);
  return node;
}

function withNode(next: PlainAdventureState, node: ActionNode): void {
  next.nodes = { ...next.nodes, [node.id]: node };
}

function newNode(
  next: PlainAdventureState,
  fields: Pick<ActionNode, 'id' | 'parentId' | 'type' | 'tokens' | 'turnId'> &
    Partial<Pick<ActionNode, 'accepted' | 'rejected' | 'timedLore'>>,
  version: number,
): ActionNode {
  const depth = fields.parentId === null ? 0 : nodeAt(next, fields.parentId, version).depth + 1;
  return {
    id: fields.id,
    parentId: fields.parentId,
    depth,
    type: fields.type,
    tokens: fields.tokens,
    textVersion: version,
    erased: false,
    turnId: fields.turnId,
    accepted: fields.accepted ?? [],
    rejected: fields.rejected ?? [],
    retconned: [],
    corrections: [],
    timedLore: fields.timedLore ?? [],
  };
}

function withOutcome(next: PlainAdventureState, outcome: TurnOutcome): void {
  next.recentTurns = [...next.recentTurns, outcome].slice(-RECENT_TURNS_KEPT);
}

function cardIndex(next: PlainAdventureState, cardId: string, version: number): number {
  const index = next.cards.findIndex((card) => card.id === cardId);
  if (index < 0) throw new ProjectionError(`unknown story card ${cardId}`, version);
  return index;
}

/** The cards a narration's prompt started timed effects for (its manifest's `timedLore`). */
function timedLoreOf(manifest: Record<string, unknown>): string[] {
  const list = manifest.timedLore;
  return Array.isArray(list) && list.every((id) => typeof id === 'string') ? list : [];
}

// eslint-disable-next-line max-lines-per-function -- one switch over every event type but the memory bank's, so what each does is read in one place
function applyEvent(next: PlainAdventureState, event: RecordedAdventureEvent): void {
  const { version } = event;
  switch (event.type) {
    case 'AdventureCreated': {
      const d = event.data;
      if (next.id !== null) throw new ProjectionError('the adventure already exists', version);
      next.id = d.adventureId;
      next.ownerId = d.ownerId;
      next.room = roomOfOwner(d.ownerId);
      next.fields = {
        title: d.title,
        plotEssentials: d.plotEssentials,
        authorsNote: d.authorsNote,
        aiInstructions: d.aiInstructions,
        persona: d.persona,
        canon: d.canon,
      };
      next.placeholders = d.placeholders;
      // Settings added since the event was written read as their defaults.
      next.settings = { ...DEFAULT_SETTINGS, ...d.settings };
      next.cards = [...next.cards, ...d.storyCards];
      const opening = newNode(
        next,
        {
          id: d.openingAction.id,
          parentId: null,
          type: 'start',
          tokens: d.openingAction.tokens,
          turnId: null,
        },
        version,
      );
      withNode(next, opening);
      next.openingId = opening.id;
      next.head = opening.id;
      return;
    }
    case 'AdventureEdited': {
      const { settings, ...fields } = event.data;
      next.fields = { ...next.fields, ...fields };
      if (settings) next.settings = { ...next.settings, ...settings };
      return;
    }
    case 'StoryCardAdded':
      next.cards = [...next.cards, event.data.card];
      return;
    case 'StoryCardEdited': {
      const index = cardIndex(next, event.data.cardId, version);
      const card: Record<string, unknown> = { ...next.cards[index], ...event.data.changes };
      // null = back to the default: the optional field goes.
      for (const [key, value] of Object.entries(event.data.changes)) {
        if (value === null) delete card[key];
      }
      next.cards = next.cards.map((old, at) =>
        at === index ? (card as unknown as StoryCard) : old,
      );
      return;
    }
    case 'StoryCardsImported': {
      const d = event.data;
      if (d.mode === 'replace') {
        const removed = new Set(d.removedCardIds);
        next.cards = next.cards.filter((card) => !removed.has(card.id));
        forgetScriptCards(next, d.removedCardIds);
        dropParkedCards(next);
      }
      next.cards = [...next.cards, ...d.cards];
      next.lorebooks = [...next.lorebooks, d.book];
      return;
    }
    case 'StoryCardRemoved': {
      const index = cardIndex(next, event.data.cardId, version);
      next.cards = next.cards.filter((_, at) => at !== index);
      forgetScriptCards(next, [event.data.cardId]);
      return;
    }
    case 'StoryCardsReordered': {
      const byId = new Map(next.cards.map((card) => [card.id, card]));
      const ordered = event.data.order.map((id) => byId.get(id)).filter((c) => c !== undefined);
      // Cards the order does not name keep their place at the end.
      const named = new Set(event.data.order);
      next.cards = [...ordered, ...next.cards.filter((card) => !named.has(card.id))];
      return;
    }

    case 'PlayerActed': {
      const { turnId, action } = event.data;
      next.redo = [];
      next.inFlight = {
        turnId,
        kind: action ? 'action' : 'continue',
        actionId: action ? action.id : null,
        actionIds: action ? [action.id] : [],
        replacesActionId: null,
        requestedAtVersion: version,
        playerEvents: [],
      };
      if (action) {
        const node = newNode(
          next,
          {
            id: action.id,
            parentId: nodeAt(next, next.head, version).id,
            type: action.type,
            tokens: action.tokens,
            turnId,
          },
          version,
        );
        withNode(next, node);
        next.head = node.id;
      }
      return;
    }
    case 'PlayersActed': {
      const { turnId, actions } = event.data;
      next.redo = [];
      next.inFlight = {
        turnId,
        kind: 'action',
        actionId: actions[actions.length - 1].id,
        actionIds: actions.map((action) => action.id),
        replacesActionId: null,
        requestedAtVersion: version,
        playerEvents: [],
      };
      for (const action of actions) {
        const node = newNode(
          next,
          {
            id: action.id,
            parentId: nodeAt(next, next.head, version).id,
            type: action.type,
            tokens: action.tokens,
            turnId,
          },
          version,
        );
        withNode(next, node);
        next.head = node.id;
      }
      return;
    }
    // A room's turn bookkeeping (round.projector.ts, beside the fold): no story node.
    case 'ActionHeld':
    case 'ActionSubmitted':
    case 'SubmissionWithdrawn':
    case 'PlayerPassed':
    case 'PlayerMarkedAway':
    case 'RoundCloseDue':
    case 'RoundClosed':
      return;
    case 'RetryRequested':
      next.redo = [];
      next.inFlight = {
        turnId: event.data.turnId,
        kind: 'retry',
        actionId: null,
        actionIds: actionsAnswered((id) => next.nodes[id], event.data.replacesActionId),
        replacesActionId: event.data.replacesActionId,
        requestedAtVersion: version,
        playerEvents: [],
      };
      return;
    case 'Narrated': {
      const d = event.data;
      // A new take goes beside the one it replaces; any other narration below the head.
      const parentId = d.replacesActionId
        ? nodeAt(next, d.replacesActionId, version).parentId
        : next.head;
      const node = newNode(
        next,
        {
          id: d.action.id,
          parentId: nodeAt(next, parentId, version).id,
          type: 'ai',
          tokens: d.action.tokens,
          turnId: d.turnId,
          accepted: d.accepted,
          rejected: d.rejected,
          timedLore: timedLoreOf(d.contextManifest),
        },
        version,
      );
      withNode(next, node);
      next.head = node.id;
      withOutcome(next, {
        turnId: d.turnId,
        status: 'done',
        actionId: node.id,
        error: null,
        code: null,
      });
      next.lastContext = {
        turnId: d.turnId,
        actionId: node.id,
        version,
        manifest: d.contextManifest,
      };
      return;
    }
    case 'NarrationFailed':
      withOutcome(next, {
        turnId: event.data.turnId,
        status: 'failed',
        actionId: null,
        error: event.data.message,
        code: event.data.code,
      });
      return;
    case 'NarrationCancelled':
      withOutcome(next, {
        turnId: event.data.turnId,
        status: 'cancelled',
        actionId: null,
        error: 'cancelled',
        code: 'cancelled',
      });
      return;
    case 'TurnStoppedByScript':
      withOutcome(next, {
        turnId: event.data.turnId,
        status: 'stopped',
        actionId: null,
        error: event.data.message,
        code: null,
      });
      return;
    case 'HeadMoved': {
      const { from, to, reason } = event.data;
      next.redo =
        reason === 'undo' ? [...next.redo, from] : reason === 'redo' ? next.redo.slice(0, -1) : [];
      next.head = nodeAt(next, to, version).id;
      return;
    }

    case 'ActionEdited': {
      const node = nodeAt(next, event.data.actionId, version);
      withNode(next, { ...node, tokens: event.data.tokens, textVersion: version });
      next.memory = withdrawnCovering(next.memory, node.id, (id) => next.nodes[id]);
      return;
    }
    case 'ActionErased': {
      const node = nodeAt(next, event.data.actionId, version);
      withNode(next, { ...node, erased: true });
      next.memory = withdrawnCovering(next.memory, node.id, (id) => next.nodes[id]);
      return;
    }
    case 'NarrativeStateCorrected': {
      const { anchorActionId, correction } = event.data;
      const node = nodeAt(next, anchorActionId, version);
      withNode(next, { ...node, corrections: [...node.corrections, correction] });
      return;
    }
    case 'StateEventRetconned': {
      const { actionId, index } = event.data;
      const node = nodeAt(next, actionId, version);
      if (node.retconned.includes(index)) return;
      withNode(next, { ...node, retconned: [...node.retconned, index].sort((a, b) => a - b) });
      return;
    }

    case 'ScriptAdded':
      next.scripts = [...next.scripts, event.data.script];
      return;
    case 'ScriptEdited':
      next.scripts = next.scripts.map((script) =>
        script.id === event.data.scriptId
          ? { ...script, ...event.data.changes, version: script.version + 1 }
          : script,
      );
      return;
    case 'ScriptRemoved':
      next.scripts = next.scripts.filter((script) => script.id !== event.data.scriptId);
      return;
    case 'ScriptsReordered': {
      const byId = new Map(next.scripts.map((script) => [script.id, script]));
      next.scripts = event.data.ids.map((id) => byId.get(id)).filter((s) => s !== undefined);
      return;
    }
    case 'ScriptStateChanged': {
      const { actionId, scriptId, state } = event.data;
      next.scriptStates = {
        ...next.scriptStates,
        [actionId]: { ...(next.scriptStates[actionId] ?? {}), [scriptId]: state },
      };
      return;
    }
    case 'ScriptHookRan':
      next.scriptRuns = [...next.scriptRuns, event.data].slice(-SCRIPT_RUNS_KEPT);
      return;

    // A message is read from the log, a cost from the read models: the state only moves on.
    case 'ScriptMessagePosted':
    case 'ModelUsageRecorded':
      return;

    default: {
      const unknown: { type: string } = event;
      throw new ProjectionError(
        `unknown event type ${JSON.stringify(unknown.type)}; this fold cannot fold it`,
        version,
      );
    }
  }
}
