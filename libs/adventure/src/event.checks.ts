/* eslint-disable max-lines -- one check per event type of the catalogue, side by side, so a reader sees every type has exactly one and compares them; split by family the table would scatter over several files */
// What each event type's data must hold to be one the live API could have written: the same
// field checks and limits as the deciders apply to commands, and the preconditions of its own on
// the state before it (an action id is new, a card fits). Each event type's entry in the event
// catalogue carries its check from here; checkRecordedEvent (event.validation.ts) runs it after
// the JSON bounds and the turn role the catalogue also declares. A type with no entry has no
// field to check beyond those.

import type { AdventureEvent, AdventureEventType, StoryCard } from './adventure.events';
import type { RoomEventType } from './room.events';
import { InvalidCommandError, LimitExceededError } from './adventure.errors';
import { LIMITS } from './adventure.limits';
import type { TurnAction } from './round.events';
import { nodeOf, type AdventureState } from './adventure.state';
import { cardIdsHeld, cardsHeld } from './script-cards.projector';
import {
  MAX_TITLE_CHARS,
  checkCanon,
  checkCardFields,
  checkCardOrigin,
  checkId,
  checkPersona,
  checkSettings,
  checkText,
} from './adventure.validation';
import { checkCharacter, checkInviteRole, checkTime } from './room.decider';
import { memberOf } from './room.state';

/** Nested deeper than any event the service writes. */
export const MAX_EVENT_DEPTH = 32;
/** Entries in any one list of an event (state events, rejections, a manifest's sections…). */
export const MAX_LIST_ITEMS = 1_000;
const MODEL_CALL_PURPOSES = new Set(['narration', 'memory', 'summary', 'embedding', 'retrieval']);

/**
 * How long a string, how deep and how long a list the API lets into one part of an event. An
 * import holds each event to what the API applied when it first accepted it: most text is at
 * most proseChars, but a script's sources, its state and a lore file's source entries have
 * their own, larger limits (and each has a size check of its own beside this one).
 */
export interface JsonBounds {
  stringChars: number;
  depth: number;
  listItems: number;
}

export const EVENT_BOUNDS: JsonBounds = {
  stringChars: LIMITS.proseChars,
  depth: MAX_EVENT_DEPTH,
  listItems: MAX_LIST_ITEMS,
};
/** A script's sources: each held to its UTF-8 bytes at save time (sourceSizeProblems). */
export const SCRIPT_SOURCE_BOUNDS: JsonBounds = {
  ...EVENT_BOUNDS,
  stringChars: LIMITS.scripts.libraryBytes,
};
/**
 * A script's `state`, as the hook chain took it (checkState): bounded by its serialised size,
 * which checkScriptState applies; the sandbox's JSON round trip nests at most 200 deep.
 */
export const SCRIPT_STATE_BOUNDS: JsonBounds = {
  stringChars: LIMITS.scripts.stateChars,
  depth: 200,
  listItems: LIMITS.scripts.stateChars,
};
/** A lore file's source entry (`origin.raw`, a book's `raw`), kept verbatim: bounded by loreRawChars of JSON. */
export const LORE_RAW_BOUNDS: JsonBounds = {
  stringChars: LIMITS.loreRawChars,
  depth: 200,
  listItems: LIMITS.loreRawChars,
};

export function invalid(message: string): never {
  throw new InvalidCommandError(message);
}

function checkCount(field: string, value: unknown, { min = 0, max = 2_000_000_000 } = {}): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    invalid(`${field} must be a whole number from ${min} to ${max}`);
  }
  return value;
}

function checkIdList(field: string, ids: unknown): void {
  if (!Array.isArray(ids)) invalid(`${field} must be a list`);
  ids.forEach((id, index) => checkId(`${field}[${index}]`, id));
}

function checkUsage(field: string, usage: unknown): void {
  if (typeof usage !== 'object' || usage === null) invalid(`${field} must be an object`);
  const u = usage as Record<string, unknown>;
  checkCount(`${field}.promptTokens`, u.promptTokens);
  checkCount(`${field}.completionTokens`, u.completionTokens);
  if (u.cachedTokens !== undefined) checkCount(`${field}.cachedTokens`, u.cachedTokens);
  if (u.model !== undefined) checkText(`${field}.model`, u.model, { max: 200 });
  if (u.scriptCacheLossTokens !== undefined) {
    checkCount(`${field}.scriptCacheLossTokens`, u.scriptCacheLossTokens);
  }
}

function checkStoryCard(field: string, card: unknown): void {
  if (typeof card !== 'object' || card === null) invalid(`${field} must be an object`);
  const { id, origin, ...fields } = card as StoryCard;
  checkId(`${field}.id`, id);
  try {
    checkCardFields(fields);
    if (origin !== undefined) checkCardOrigin(origin);
  } catch (error) {
    invalid(`${field}: ${(error as Error).message}`);
  }
  if (typeof fields.name !== 'string') invalid(`${field}.name is missing`);
}

/** Only the fields a request could set: an import carries no field the API would refuse. */
function checkKnownKeys(field: string, value: unknown, known: readonly string[]): void {
  if (typeof value !== 'object' || value === null) return;
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) invalid(`${field}.${key} is not a field of ${field}`);
  }
}

const PERSONA_FIELDS = ['name', 'pronouns', 'description'] as const;
const CANON_FIELDS = ['rules', 'forbiddenStatusChanges'] as const;

export function requireNoTurnInFlight(state: AdventureState): void {
  if (state.inFlight) {
    invalid(`a turn starts while turn ${state.inFlight.turnId} is still in flight`);
  }
}

function requireNewAction(state: AdventureState, actionId: string): void {
  if (nodeOf(state, actionId)) invalid(`action id ${actionId} is already used in this adventure`);
}

type DataOf<T extends AdventureEventType> = Extract<AdventureEvent, { type: T }>['data'];

/** Throws InvalidCommandError (or LimitExceededError) naming the field the API would refuse. */
export type EventCheck<T extends AdventureEventType> = (
  data: DataOf<T>,
  before: AdventureState,
) => void;

const prose = { max: LIMITS.proseChars };

function requireMemberIn(before: AdventureState, field: string, userId: string): void {
  checkId(field, userId);
  if (!memberOf(before, userId)) invalid(`${field} ${userId} is not a member of the room then`);
}

// The room's events (room.decider.ts decides them): their fields, and the member they name.
const ROOM_CHECKS = {
  InviteCreated: (d) => {
    checkId('data.code', d.code);
    checkInviteRole(d.role);
    if (d.maxUses !== null)
      checkCount('data.maxUses', d.maxUses, { min: 1, max: LIMITS.inviteMaxUses });
    if (d.expiresAt !== null) checkTime('data.expiresAt', d.expiresAt);
    checkTime('data.at', d.at);
  },
  InviteRevoked: (d) => {
    checkId('data.code', d.code);
  },
  MemberJoined: (d) => {
    checkId('data.userId', d.userId);
    checkInviteRole(d.role);
    checkCharacter(d.character);
    checkId('data.inviteCode', d.inviteCode);
    checkTime('data.at', d.at);
  },
  MemberLeft: (d, before) => requireMemberIn(before, 'data.userId', d.userId),
  MemberKicked: (d) => {
    checkId('data.userId', d.userId);
    if (typeof d.banned !== 'boolean') invalid('data.banned must be true or false');
  },
  MemberRoleChanged: (d, before) => {
    requireMemberIn(before, 'data.userId', d.userId);
    checkInviteRole(d.role);
  },
  CharacterChanged: (d, before) => {
    requireMemberIn(before, 'data.userId', d.userId);
    checkCharacter(d.character);
  },
  RoomHandedOver: (d, before) => {
    // The host it was handed from, as the log named them: an import renames the first owner.
    checkId('data.from', d.from);
    requireMemberIn(before, 'data.to', d.to);
  },
  RoomReset: (d) => {
    checkId('data.hostId', d.hostId);
    checkIdList('data.droppedMembers', d.droppedMembers);
    checkCount('data.droppedInvites', d.droppedInvites);
  },
} satisfies { readonly [T in RoomEventType]?: EventCheck<T> };

export const EVENT_CHECKS = {
  ScriptAdded: (d) => {
    checkId('data.script.id', d.script?.id);
    checkText('data.script.name', d.script.name, {
      max: LIMITS.scripts.nameChars,
      required: true,
    });
  },
  ScriptEdited: (d) => {
    checkId('data.scriptId', d.scriptId);
    if (d.changes?.name !== undefined) {
      checkText('data.changes.name', d.changes.name, {
        max: LIMITS.scripts.nameChars,
        required: true,
      });
    }
  },
  ScriptStateChanged: (d) => {
    checkId('data.scriptId', d.scriptId);
    // The head the run wrote to: '' only for a run before the story had a node.
    checkText('data.actionId', d.actionId, { max: LIMITS.idChars });
    const state = d.state;
    if (typeof state !== 'object' || state === null || Array.isArray(state)) {
      invalid('data.state must be an object');
    }
    const size = JSON.stringify(state).length;
    if (size > LIMITS.scripts.stateChars) {
      invalid(
        `data.state is ${size} characters of JSON; a script's state is at most ${LIMITS.scripts.stateChars}`,
      );
    }
  },
  AdventureCreated: (d) => {
    checkText('data.title', d.title, { max: MAX_TITLE_CHARS, required: true });
    checkText('data.opening', d.opening, { ...prose, required: true });
    checkText('data.plotEssentials', d.plotEssentials, prose);
    checkText('data.authorsNote', d.authorsNote, prose);
    checkText('data.aiInstructions', d.aiInstructions, prose);
    checkPersona(d.persona);
    checkKnownKeys('data.persona', d.persona, PERSONA_FIELDS);
    checkCanon(d.canon);
    checkKnownKeys('data.canon', d.canon, CANON_FIELDS);
    if (typeof d.placeholders !== 'object' || d.placeholders === null) {
      invalid('data.placeholders must be an object');
    }
    for (const [name, answer] of Object.entries(d.placeholders)) {
      checkText(`data.placeholders.${name}`, answer, { max: LIMITS.placeholderAnswerChars });
    }
    if (!Array.isArray(d.storyCards)) invalid('data.storyCards must be a list');
    if (d.storyCards.length > LIMITS.storyCardsPerAdventure) {
      throw new LimitExceededError(
        `data.storyCards holds ${d.storyCards.length} cards; an adventure holds at most ${LIMITS.storyCardsPerAdventure} (limit storyCardsPerAdventure)`,
      );
    }
    d.storyCards.forEach((card, index) => checkStoryCard(`data.storyCards[${index}]`, card));
    if (typeof d.settings !== 'object' || d.settings === null) {
      invalid('data.settings must be an object');
    }
    checkSettings(d.settings as unknown as Record<string, unknown>);
    checkId('data.openingAction.id', d.openingAction?.id);
    checkCount('data.openingAction.tokens', d.openingAction?.tokens);
  },
  AdventureEdited: (d) => {
    if (d.title !== undefined) {
      checkText('data.title', d.title, { max: MAX_TITLE_CHARS, required: true });
    }
    for (const field of ['plotEssentials', 'authorsNote', 'aiInstructions'] as const) {
      if (d[field] !== undefined) checkText(`data.${field}`, d[field], prose);
    }
    if (d.persona !== undefined) {
      checkPersona(d.persona);
      checkKnownKeys('data.persona', d.persona, PERSONA_FIELDS);
    }
    if (d.canon !== undefined) {
      checkCanon(d.canon);
      checkKnownKeys('data.canon', d.canon, CANON_FIELDS);
    }
    if (d.settings !== undefined) {
      if (typeof d.settings !== 'object' || d.settings === null) {
        invalid('data.settings must be an object');
      }
      checkSettings(d.settings as Record<string, unknown>);
    }
  },
  StoryCardAdded: (d, before) => {
    checkStoryCard('data.card', d.card);
    if (cardIdsHeld(before).has(d.card.id)) {
      invalid(`story card ${d.card.id} already exists`);
    }
    if (cardsHeld(before) + 1 > LIMITS.storyCardsPerAdventure) {
      throw new LimitExceededError(
        `an adventure holds at most ${LIMITS.storyCardsPerAdventure} story cards (limit storyCardsPerAdventure)`,
      );
    }
  },
  StoryCardEdited: (d) => {
    checkId('data.cardId', d.cardId);
    if (typeof d.changes !== 'object' || d.changes === null) {
      invalid('data.changes must be an object');
    }
    checkCardFields(d.changes);
  },
  StoryCardRemoved: (d) => {
    checkId('data.cardId', d.cardId);
  },
  StoryCardsImported: (d, before) => {
    checkId('data.book.id', d.book?.id);
    if (before.lorebooks.some((book) => book.id === d.book.id)) {
      invalid(`lorebook ${d.book.id} is already imported`);
    }
    if (d.mode !== 'merge' && d.mode !== 'replace') invalid('data.mode must be merge or replace');
    if (!Array.isArray(d.cards)) invalid('data.cards must be a list');
    const kept = d.mode === 'replace' ? 0 : cardsHeld(before);
    if (kept + d.cards.length > LIMITS.storyCardsPerAdventure) {
      throw new LimitExceededError(
        `an adventure holds at most ${LIMITS.storyCardsPerAdventure} story cards (limit storyCardsPerAdventure)`,
      );
    }
    d.cards.forEach((card, index) => checkStoryCard(`data.cards[${index}]`, card));
  },
  PlayerActed: (d, before) => {
    if (!['do', 'say', 'story', 'continue'].includes(d.inputType)) {
      invalid(`data.inputType ${JSON.stringify(d.inputType)} is not do, say, story or continue`);
    }
    if (d.inputType === 'continue') {
      if (d.action !== null) invalid('data.action must be null for continue');
      return;
    }
    if (typeof d.action !== 'object' || d.action === null) invalid('data.action is missing');
    checkId('data.action.id', d.action.id);
    requireNewAction(before, d.action.id);
    checkText('data.action.text', d.action.text, { max: LIMITS.actionChars });
    checkCount('data.action.tokens', d.action.tokens);
  },
  RetryRequested: (d) => {
    checkId('data.replacesActionId', d.replacesActionId);
  },
  Narrated: (d, before) => {
    checkId('data.action.id', d.action?.id);
    requireNewAction(before, d.action.id);
    // Blank only when an Output hook made it so (RecordNarration's rule).
    checkText('data.action.text', d.action.text, {
      max: LIMITS.narrationChars,
      required: d.textByScript !== true,
    });
    if (d.action.text === '') invalid('data.action.text is empty');
    if (d.textByScript !== undefined && d.textByScript !== true) {
      invalid('data.textByScript must be true when present');
    }
    checkCount('data.action.tokens', d.action.tokens);
    if (!Array.isArray(d.accepted)) invalid('data.accepted must be a list');
    if (!Array.isArray(d.rejected)) invalid('data.rejected must be a list');
    checkUsage('data.usage', d.usage);
    checkText('data.model', d.model, { max: 200 });
    if (d.narrator !== 'offline' && d.narrator !== 'remote') {
      invalid('data.narrator must be "offline" or "remote"');
    }
    checkCount('data.latencyMs', d.latencyMs);
  },
  NarrationFailed: (d) => {
    checkText('data.message', d.message, { max: LIMITS.textChars });
    checkCount('data.attempts', d.attempts, { max: 1_000 });
  },
  HeadMoved: (d, before) => {
    requireNoTurnInFlight(before);
    checkId('data.from', d.from);
    checkId('data.to', d.to);
  },
  ActionEdited: (d) => {
    checkId('data.actionId', d.actionId);
    checkText('data.text', d.text, prose);
    checkCount('data.tokens', d.tokens);
  },
  ActionErased: (d) => {
    checkId('data.actionId', d.actionId);
  },
  NarrativeStateCorrected: (d) => {
    checkId('data.anchorActionId', d.anchorActionId);
  },
  StateEventRetconned: (d) => {
    checkId('data.actionId', d.actionId);
    checkCount('data.index', d.index, { max: MAX_LIST_ITEMS });
  },
  ModelUsageRecorded: (d) => {
    if (!MODEL_CALL_PURPOSES.has(d.purpose)) {
      invalid(`data.purpose ${JSON.stringify(d.purpose)} is not a model call purpose`);
    }
    checkUsage('data.usage', d.usage);
  },
  MemoryWritten: (d, before) => {
    checkId('data.memoryId', d.memoryId);
    checkText('data.text', d.text, { max: LIMITS.memoryTextChars, required: true });
    if (d.sourceActionIds !== null) {
      checkIdList('data.sourceActionIds', d.sourceActionIds);
    }
    if (before.memory.memories.length + 1 > LIMITS.memoriesPerAdventure) {
      throw new LimitExceededError(
        `an adventure holds at most ${LIMITS.memoriesPerAdventure} memories (limit memoriesPerAdventure)`,
      );
    }
    if (d.usage !== undefined) checkUsage('data.usage', d.usage);
  },
  MemoryEdited: (d) => {
    checkId('data.memoryId', d.memoryId);
    checkText('data.text', d.text, { max: LIMITS.memoryTextChars, required: true });
  },
  MemoryPinned: (d) => {
    checkId('data.memoryId', d.memoryId);
  },
  MemoryUnpinned: (d) => {
    checkId('data.memoryId', d.memoryId);
  },
  MemoryDeleted: (d) => {
    checkId('data.memoryId', d.memoryId);
  },
  MemoryForgotten: (d) => {
    checkIdList('data.memoryIds', d.memoryIds);
  },
  MemoriesUsed: (d) => {
    checkId('data.turnId', d.turnId);
    if (!Array.isArray(d.memoryIds)) invalid('data.memoryIds must be a list');
  },
  SummaryWritten: (d) => {
    checkId('data.summaryId', d.summaryId);
    checkText('data.text', d.text, prose);
    checkIdList('data.chapterIds', d.chapterIds);
    if (d.usage !== undefined) checkUsage('data.usage', d.usage);
  },
  ChapterWritten: (d) => {
    checkId('data.chapterId', d.chapterId);
    checkId('data.anchorActionId', d.anchorActionId);
    checkText('data.text', d.text, { ...prose, required: true });
    checkCount('data.sourceStart', d.sourceStart);
    checkCount('data.sourceEnd', d.sourceEnd);
    checkIdList('data.sourceActionIds', d.sourceActionIds);
    if (d.usage !== undefined) checkUsage('data.usage', d.usage);
  },
  ...ROOM_CHECKS,
  PlayersActed: (d, before) => {
    if (!Array.isArray(d.actions) || d.actions.length === 0) {
      invalid('data.actions must list at least one action');
    }
    const ids = new Set<string>();
    d.actions.forEach((action, index) => {
      checkTurnAction(`data.actions[${index}]`, action);
      requireNewAction(before, action.id);
      if (ids.has(action.id)) invalid(`data.actions[${index}].id is repeated`);
      ids.add(action.id);
    });
  },
  ActionHeld: (d) => checkTurnAction('data.action', d.action),
  ActionSubmitted: (d) => checkTurnAction('data.action', d.action),
} satisfies { readonly [T in AdventureEventType]?: EventCheck<T> };

const PLAYER_TYPES = new Set(['do', 'say', 'story']);
/** A player's action of a room's turn (round.events.ts), as an imported event carries it. */
function checkTurnAction(field: string, action: TurnAction): void {
  if (typeof action !== 'object' || action === null) invalid(`${field} is missing`);
  checkId(`${field}.id`, action.id);
  checkId(`${field}.actorId`, action.actorId);
  if (!PLAYER_TYPES.has(action.type)) invalid(`${field}.type must be do, say or story`);
  checkText(`${field}.text`, action.text, { max: LIMITS.actionChars });
  checkCount(`${field}.tokens`, action.tokens);
}
