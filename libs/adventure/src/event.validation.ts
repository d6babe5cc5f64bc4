/* eslint-disable max-lines -- one check per event type, in the order of the event union; split, the checks of one stream would live in several files that must all change with a new event */
// Checks a recorded event as the live API would have made it: the same field checks and limits
// as the deciders apply to commands, and the same preconditions on the state before it (a turn
// starts only when none is in flight, a narration answers the turn in flight, an action id is
// new). Used where events arrive already made — an import — so a file cannot put into the log
// what no request could. Errors name the field.

import { InvalidCommandError, LimitExceededError } from './adventure.errors';
import type { AdventureEvent, StoryCard } from './adventure.events';
import { LIMITS } from './adventure.limits';
import { turnRoleOf } from './event.catalogue';
import { turnStatus } from './adventure.queries';
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

/** Nested deeper than any event the service writes. */
export const MAX_EVENT_DEPTH = 32;
/** Entries in any one list of an event (state events, rejections, a manifest's sections…). */
const MAX_LIST_ITEMS = 1_000;
/** The lists that hold an adventure's cards, which may run to LIMITS.storyCardsPerAdventure. */
const CARD_LISTS = new Set(['data.storyCards', 'data.cards', 'data.removedCardIds', 'data.order']);
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

const EVENT_BOUNDS: JsonBounds = {
  stringChars: LIMITS.proseChars,
  depth: MAX_EVENT_DEPTH,
  listItems: MAX_LIST_ITEMS,
};
/** A script's sources: each held to its UTF-8 bytes at save time (sourceSizeProblems). */
const SCRIPT_SOURCE_BOUNDS: JsonBounds = {
  ...EVENT_BOUNDS,
  stringChars: LIMITS.scripts.libraryBytes,
};
/**
 * A script's `state`, as the hook chain took it (checkState): bounded by its serialised size,
 * which checkScriptState applies; the sandbox's JSON round trip nests at most 200 deep.
 */
const SCRIPT_STATE_BOUNDS: JsonBounds = {
  stringChars: LIMITS.scripts.stateChars,
  depth: 200,
  listItems: LIMITS.scripts.stateChars,
};
/** A lore file's source entry (`origin.raw`, a book's `raw`), kept verbatim: bounded by loreRawChars of JSON. */
const LORE_RAW_BOUNDS: JsonBounds = {
  stringChars: LIMITS.loreRawChars,
  depth: 200,
  listItems: LIMITS.loreRawChars,
};

function invalid(message: string): never {
  throw new InvalidCommandError(message);
}

/**
 * Every string anywhere in `value`: no NUL (Postgres refuses it in jsonb), no lone surrogate,
 * at most `bounds.stringChars`; nesting and list lengths bounded. Names the first bad field by
 * its path.
 */
export function checkJsonValue(
  path: string,
  value: unknown,
  depth = 0,
  bounds: JsonBounds = EVENT_BOUNDS,
): void {
  if (depth > bounds.depth) invalid(`${path} nests more than ${bounds.depth} deep`);
  if (typeof value === 'string') {
    checkText(path, value, { max: bounds.stringChars });
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) invalid(`${path} must be a finite number`);
    return;
  }
  if (value === null || typeof value === 'boolean') return;
  if (Array.isArray(value)) {
    const cardList = CARD_LISTS.has(path);
    const max = cardList ? LIMITS.storyCardsPerAdventure : bounds.listItems;
    if (value.length > max) {
      invalid(
        `${path} has more than ${max} entries${cardList ? ' (limit storyCardsPerAdventure)' : ''}`,
      );
    }
    value.forEach((item, index) => checkJsonValue(`${path}[${index}]`, item, depth + 1, bounds));
    return;
  }
  if (typeof value === 'object') {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      checkText(`${path} key`, key, { max: LIMITS.idChars });
      const inner = key === 'raw' && isLoreSource(path) ? LORE_RAW_BOUNDS : bounds;
      checkJsonValue(`${path}.${key}`, item, depth + 1, inner);
    }
    return;
  }
  invalid(`${path} is not JSON`);
}

/** A card's `origin` or an imported book: their `raw` is the lore file's own entry. */
function isLoreSource(path: string): boolean {
  return path.endsWith('.origin') || path === 'data.book';
}

/** The bounds an event's data was accepted under (see JsonBounds). */
function boundsOf(event: AdventureEvent): JsonBounds {
  switch (event.type) {
    case 'ScriptAdded':
    case 'ScriptEdited':
      return SCRIPT_SOURCE_BOUNDS;
    case 'ScriptStateChanged':
      return SCRIPT_STATE_BOUNDS;
    default:
      return EVENT_BOUNDS;
  }
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

function requireNoTurnInFlight(state: AdventureState): void {
  if (state.inFlight) {
    invalid(`a turn starts while turn ${state.inFlight.turnId} is still in flight`);
  }
}

function requireTurnInFlight(state: AdventureState, turnId: unknown): void {
  if (!state.inFlight || state.inFlight.turnId !== turnId) {
    invalid(`turnId ${JSON.stringify(turnId)} is not the turn in flight`);
  }
}

function requireNewAction(state: AdventureState, actionId: string): void {
  if (nodeOf(state, actionId)) invalid(`action id ${actionId} is already used in this adventure`);
}

function requireNewTurn(state: AdventureState, turnId: string): void {
  if (turnStatus(state, turnId)) invalid(`turn id ${turnId} is already used in this adventure`);
}

/**
 * A turn's preconditions, from the event catalogue's turn roles: an event that starts a turn
 * needs none in flight and a new turn id; one that ends a turn needs that turn in flight. An
 * onInput script's stop is the exception: it ends a turn that never started.
 */
function checkTurnRole(event: AdventureEvent, before: AdventureState): void {
  const turn = turnRoleOf(event);
  if (turn?.role === 'starts') {
    requireNoTurnInFlight(before);
    checkId('data.turnId', turn.turnId);
    requireNewTurn(before, turn.turnId);
  } else if (turn?.role === 'ends') {
    const stoppedOnInput = event.type === 'TurnStoppedByScript' && event.data.hook === 'input';
    if (!stoppedOnInput) requireTurnInFlight(before, turn.turnId);
  }
}

/** Throws InvalidCommandError naming the field when the live API could not have written it. */
// eslint-disable-next-line max-lines-per-function -- one switch over every event type, each checking its own fields; the cases are the event catalogue
export function checkRecordedEvent(event: AdventureEvent, before: AdventureState): void {
  checkJsonValue('data', event.data, 0, boundsOf(event));
  checkTurnRole(event, before);
  const prose = { max: LIMITS.proseChars };
  switch (event.type) {
    case 'ScriptAdded':
      checkId('data.script.id', event.data.script?.id);
      checkText('data.script.name', event.data.script.name, {
        max: LIMITS.scripts.nameChars,
        required: true,
      });
      return;
    case 'ScriptEdited':
      checkId('data.scriptId', event.data.scriptId);
      if (event.data.changes?.name !== undefined) {
        checkText('data.changes.name', event.data.changes.name, {
          max: LIMITS.scripts.nameChars,
          required: true,
        });
      }
      return;
    case 'ScriptStateChanged': {
      checkId('data.scriptId', event.data.scriptId);
      // The head the run wrote to: '' only for a run before the story had a node.
      checkText('data.actionId', event.data.actionId, { max: LIMITS.idChars });
      const state = event.data.state;
      if (typeof state !== 'object' || state === null || Array.isArray(state)) {
        invalid('data.state must be an object');
      }
      const size = JSON.stringify(state).length;
      if (size > LIMITS.scripts.stateChars) {
        invalid(
          `data.state is ${size} characters of JSON; a script's state is at most ${LIMITS.scripts.stateChars}`,
        );
      }
      return;
    }
    case 'AdventureCreated': {
      const d = event.data;
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
      return;
    }
    case 'AdventureEdited': {
      const d = event.data;
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
      return;
    }
    case 'StoryCardAdded':
      checkStoryCard('data.card', event.data.card);
      if (cardIdsHeld(before).has(event.data.card.id)) {
        invalid(`story card ${event.data.card.id} already exists`);
      }
      if (cardsHeld(before) + 1 > LIMITS.storyCardsPerAdventure) {
        throw new LimitExceededError(
          `an adventure holds at most ${LIMITS.storyCardsPerAdventure} story cards (limit storyCardsPerAdventure)`,
        );
      }
      return;
    case 'StoryCardEdited':
      checkId('data.cardId', event.data.cardId);
      if (typeof event.data.changes !== 'object' || event.data.changes === null) {
        invalid('data.changes must be an object');
      }
      checkCardFields(event.data.changes);
      return;
    case 'StoryCardRemoved':
      checkId('data.cardId', event.data.cardId);
      return;
    case 'StoryCardsImported': {
      const d = event.data;
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
      return;
    }
    case 'PlayerActed': {
      const d = event.data;
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
      return;
    }
    case 'RetryRequested':
      checkId('data.replacesActionId', event.data.replacesActionId);
      return;
    case 'Narrated': {
      const d = event.data;
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
      return;
    }
    case 'NarrationFailed':
      checkText('data.message', event.data.message, { max: LIMITS.textChars });
      checkCount('data.attempts', event.data.attempts, { max: 1_000 });
      return;
    case 'NarrationCancelled':
      return;
    case 'HeadMoved':
      requireNoTurnInFlight(before);
      checkId('data.from', event.data.from);
      checkId('data.to', event.data.to);
      return;
    case 'ActionEdited':
      checkId('data.actionId', event.data.actionId);
      checkText('data.text', event.data.text, prose);
      checkCount('data.tokens', event.data.tokens);
      return;
    case 'ActionErased':
      checkId('data.actionId', event.data.actionId);
      return;
    case 'NarrativeStateCorrected':
      checkId('data.anchorActionId', event.data.anchorActionId);
      return;
    case 'StateEventRetconned':
      checkId('data.actionId', event.data.actionId);
      checkCount('data.index', event.data.index, { max: MAX_LIST_ITEMS });
      return;
    case 'ModelUsageRecorded':
      if (!MODEL_CALL_PURPOSES.has(event.data.purpose)) {
        invalid(`data.purpose ${JSON.stringify(event.data.purpose)} is not a model call purpose`);
      }
      checkUsage('data.usage', event.data.usage);
      return;
    case 'MemoryWritten':
      checkId('data.memoryId', event.data.memoryId);
      checkText('data.text', event.data.text, { max: LIMITS.memoryTextChars, required: true });
      if (event.data.sourceActionIds !== null) {
        checkIdList('data.sourceActionIds', event.data.sourceActionIds);
      }
      if (before.memory.memories.length + 1 > LIMITS.memoriesPerAdventure) {
        throw new LimitExceededError(
          `an adventure holds at most ${LIMITS.memoriesPerAdventure} memories (limit memoriesPerAdventure)`,
        );
      }
      if (event.data.usage !== undefined) checkUsage('data.usage', event.data.usage);
      return;
    case 'MemoryEdited':
      checkId('data.memoryId', event.data.memoryId);
      checkText('data.text', event.data.text, { max: LIMITS.memoryTextChars, required: true });
      return;
    case 'MemoryPinned':
    case 'MemoryUnpinned':
    case 'MemoryDeleted':
      checkId('data.memoryId', event.data.memoryId);
      return;
    case 'MemoryForgotten':
      checkIdList('data.memoryIds', event.data.memoryIds);
      return;
    case 'MemoriesUsed':
      checkId('data.turnId', event.data.turnId);
      if (!Array.isArray(event.data.memoryIds)) invalid('data.memoryIds must be a list');
      return;
    case 'SummaryWritten':
      checkId('data.summaryId', event.data.summaryId);
      checkText('data.text', event.data.text, prose);
      if (event.data.usage !== undefined) checkUsage('data.usage', event.data.usage);
      return;
  }
}
