/* eslint-disable max-lines -- the decider's switch and the checks only it uses; split by command family it would scatter the rules a reader compares */
// What happens when a command meets an adventure: the events to append, or a typed domain error.
// Pure: the state comes from the projector, ids and token counts from the caller.

import type {
  AdventureCommand,
  DecideContext,
  RecordModelUsage,
  StoryCardInput,
} from './adventure.commands';
import {
  ConflictError,
  InvalidCommandError,
  LimitExceededError,
  NotFoundError,
  TurnInFlightError,
} from './adventure.errors';
import type {
  AdventureEditedData,
  AdventureEvent,
  AdventureSettings,
  StoryCard,
} from './adventure.events';
import { LIMITS } from './adventure.limits';
import { isOnPath, narrativeAtDepth, projectDecided } from './adventure.projector';
import { narrativeForTurn, storyTail, turnStatus } from './adventure.queries';
import { DEFAULT_SETTINGS, nodeOf, type ActionNode, type AdventureState } from './adventure.state';
import {
  MAX_CARD_NAME_CHARS,
  MAX_TITLE_CHARS,
  checkCanon,
  checkCardField,
  checkCardFields,
  checkCardOrigin,
  checkId,
  checkPersona,
  checkSettings,
  checkText,
} from './adventure.validation';
import { checkJsonValue } from './event.validation';
import { cardIdsHeld, cardsHeld } from './script-cards.projector';
import type { MemoriesUsed } from './memory.events';
import { failureCodeOfMessage, isNarrationFailureCode } from './narration-failure';
import { judgeReply, tryCorrection } from './narrative.port';
import { fillPlaceholders, formatPlayerInput } from './player-input.format';
import { decideRoom, isRoomCommand } from './room.decider';
import {
  decideScript,
  isScriptCommand,
  outputScriptChangedText,
  scriptEffects,
  scriptedSubmit,
  scriptsAdded,
  storedScriptText,
} from './script.decider';
import { roomPlayersOf } from './round.room';
import { actingCharacterOf } from './player-input.actor';
import {
  decideRoomAction,
  decideRound,
  isRoomTurn,
  isRoundCommand,
  nextTurnAfter,
} from './round.decider';

/** The action id is taken: a resent request is answered from the log, not decided again. */
export class DuplicateActionError extends ConflictError {
  constructor(readonly actionId: string) {
    super(`action id ${actionId} is already used in this adventure; send a new id`);
    this.name = 'DuplicateActionError';
  }
}

/** The worker's result names a turn that is not the one in flight (finished, or never started). */
export class TurnNotInFlightError extends ConflictError {
  constructor(readonly turnId: string) {
    super(`turn ${turnId} is not in flight; it has finished or never started`);
    this.name = 'TurnNotInFlightError';
  }
}

function narrationScriptEffects(
  turnId: string,
  actionId: string,
  scripts: Extract<AdventureCommand, { type: 'RecordNarration' }>['data']['scripts'],
  state: AdventureState,
): AdventureEvent[] {
  if (!scripts) return [];
  const cards = cardIdsHeld(state);
  return [
    ...(scripts.context
      ? scriptEffects(turnId, 'context', actionId, scripts.context, state, cards)
      : []),
    ...(scripts.output
      ? scriptEffects(turnId, 'output', actionId, scripts.output, state, cards)
      : []),
  ];
}

/**
 * The events `command` appends to `state`. In a room, a decision that ends the turn in flight
 * also starts the next one when actions wait for it (round.decider.ts's `nextTurnAfter`).
 */
export function decide(
  command: AdventureCommand,
  state: AdventureState,
  context: DecideContext,
): AdventureEvent[] {
  return nextTurnAfter(state, decideOne(command, state, context));
}

// eslint-disable-next-line max-lines-per-function -- one switch over every command, so each rule is read beside the others; the longer cases call helpers below
function decideOne(
  command: AdventureCommand,
  state: AdventureState,
  context: DecideContext,
): AdventureEvent[] {
  if (command.type === 'CreateAdventure') return create(command.data, state, context);
  if (command.type === 'RecordModelUsage') return modelUsage(command.data, state);
  if (state.id === null) throw new NotFoundError('adventure not found; create it first');
  if (isScriptCommand(command)) return decideScript(command, state);
  if (isRoomCommand(command)) return decideRoom(command, state);
  if (isRoundCommand(command)) return decideRound(command, state);
  const count = (text: string) => context.countTokens(text, state.settings.encoding);

  switch (command.type) {
    case 'EditAdventure':
      return editAdventure(command.data, state);

    case 'AddStoryCard': {
      const card = checkCard(command.data.card);
      // A parked card (script-cards.projector.ts) may come back: its id is taken, it counts.
      if (cardIdsHeld(state).has(card.id)) {
        throw new ConflictError(`story card ${card.id} already exists; send a new id`);
      }
      checkCardCount(cardsHeld(state) + 1);
      return [{ type: 'StoryCardAdded', data: { card } }];
    }

    case 'EditStoryCard': {
      const card = findCard(state, command.data.cardId);
      const changes = checkCardFields(command.data.changes ?? {}, { edit: true });
      const changed = Object.fromEntries(
        Object.entries(changes).filter(
          ([key, value]) => !sameValue(card[key as keyof StoryCard], value),
        ),
      );
      if (Object.keys(changed).length === 0) return [];
      return [{ type: 'StoryCardEdited', data: { cardId: card.id, changes: changed } }];
    }

    case 'ImportStoryCards':
      return importCards(command.data, state);

    case 'RemoveStoryCard':
      findCard(state, command.data.cardId);
      return [{ type: 'StoryCardRemoved', data: { cardId: command.data.cardId } }];

    case 'SubmitAction':
      return submitAction(command.data, state, count);

    case 'RequestRetry': {
      requireNoTurnInFlight(state);
      checkId('turnId', command.data.turnId);
      requireNewTurn(state, command.data.turnId);
      const head = state.head === null ? undefined : nodeOf(state, state.head);
      if (!head || head.type !== 'ai' || head.erased) {
        throw new InvalidCommandError(
          'retry needs the story to end with a narration; act or continue instead',
        );
      }
      return [
        {
          type: 'RetryRequested',
          data: { turnId: command.data.turnId, replacesActionId: head.id },
        },
      ];
    }

    case 'RecordNarration': {
      const d = command.data;
      const inFlight = requireTurnInFlight(state, d.turnId);
      const actionId = checkId('actionId', d.actionId);
      requireNewAction(state, actionId);
      // A blank text is a reply with only a state block, unless an Output hook made it so.
      const byScript = outputScriptChangedText(d.scripts?.output);
      const text = checkText('text', d.text, { max: LIMITS.narrationChars, required: !byScript });
      if (text === '') throw new InvalidCommandError('text is empty; write something');
      if (typeof d.reply !== 'string') {
        throw new InvalidCommandError("reply must be the model's whole reply, as text");
      }
      // Judged here, on the state this narration is appended to: a canon edited while the model
      // wrote is the canon it answers to (the handler decides again on a version conflict).
      const { accepted, rejected } = judgeReply(
        d.reply,
        narrativeForTurn(state),
        state.fields.canon,
        inFlight.playerEvents,
      );
      return [
        {
          type: 'Narrated',
          data: {
            turnId: d.turnId,
            action: { id: actionId, text, tokens: count(text) },
            replacesActionId: inFlight.replacesActionId,
            accepted,
            rejected,
            reasoning: d.reasoning ?? null,
            usage: {
              promptTokens: d.usage.promptTokens,
              completionTokens: d.usage.completionTokens,
              cachedTokens: d.usage.cachedTokens,
              ...(d.usage.scriptCacheLossTokens
                ? { scriptCacheLossTokens: d.usage.scriptCacheLossTokens }
                : {}),
            },
            model: d.model,
            narrator: d.narrator,
            finishReason: d.finishReason,
            contextManifest: d.contextManifest,
            latencyMs: d.latencyMs,
            ...(byScript && { textByScript: true as const }),
          },
        },
        // The scripts' effects on the narration's node, Context's before Output's (the
        // card ids they know run on from one to the other).
        ...narrationScriptEffects(d.turnId, actionId, d.scripts, state),
        ...memoriesUsed(d.turnId, d.memoriesUsed),
        ...(d.retrievalUsage
          ? modelUsage({ purpose: 'retrieval', usage: d.retrievalUsage, turnId: d.turnId }, state)
          : []),
      ];
    }

    case 'StopTurnByScript': {
      const { turnId, scriptId, message, effects } = command.data;
      requireTurnInFlight(state, turnId);
      return [
        { type: 'TurnStoppedByScript', data: { turnId, hook: 'context', scriptId, message } },
        ...scriptEffects(turnId, 'context', state.head ?? '', effects, state),
      ];
    }

    case 'RecordNarrationFailure': {
      const { turnId, error, attempts } = command.data;
      const code = command.data.code ?? failureCodeOfMessage(String(error));
      if (!isNarrationFailureCode(code)) {
        throw new InvalidCommandError(`unknown narration failure code "${String(code)}"`);
      }
      requireTurnInFlight(state, turnId);
      if (!Number.isInteger(attempts) || attempts < 1) {
        throw new InvalidCommandError('attempts must be a positive integer');
      }
      return [
        { type: 'NarrationFailed', data: { turnId, code, message: String(error), attempts } },
      ];
    }

    case 'CancelTurn': {
      const { turnId } = command.data;
      if (state.inFlight?.turnId === turnId) {
        return [{ type: 'NarrationCancelled', data: { turnId } }];
      }
      if (turnStatus(state, turnId)) {
        throw new ConflictError(`turn ${turnId} has already finished; there is nothing to cancel`);
      }
      throw new NotFoundError(`turn ${turnId} not found in this adventure`);
    }

    case 'Undo': {
      requireNoTurnInFlight(state);
      const head = state.head ?? '';
      const tail = storyTail(state, 3 + (state.inFlight ? 0 : undoReach(state)));
      const last = tail[tail.length - 1];
      if (!last || last.type === 'start') {
        throw new InvalidCommandError('nothing to undo: the opening cannot be undone');
      }
      // The last turn: the narration, and the player actions it answered (one, or a room's
      // round: every action its turn wrote) when there are any.
      let cut = tail.length - 1;
      if (last.type === 'ai' && isPlayerAction(tail[cut - 1]?.type)) {
        const answered = tail[cut - 1].turnId;
        cut -= 1;
        while (isPlayerAction(tail[cut - 1]?.type) && tail[cut - 1].turnId === answered) cut -= 1;
      }
      const to = tail[cut - 1];
      return [{ type: 'HeadMoved', data: { from: head, to: to.id, reason: 'undo' } }];
    }

    case 'Redo': {
      requireNoTurnInFlight(state);
      const to = state.redo[state.redo.length - 1];
      if (to === undefined) {
        throw new InvalidCommandError('nothing to redo: redo restores what undo hid');
      }
      return [{ type: 'HeadMoved', data: { from: state.head ?? '', to, reason: 'redo' } }];
    }

    case 'MoveHead': {
      requireNoTurnInFlight(state);
      const node = findNode(state, command.data.actionId);
      if (node.erased) {
        throw new InvalidCommandError(`action ${node.id} is erased; choose an action in the story`);
      }
      if (node.id === state.head) return [];
      return [
        { type: 'HeadMoved', data: { from: state.head ?? '', to: node.id, reason: 'select' } },
      ];
    }

    case 'EditAction': {
      requireNoTurnInFlight(state);
      const node = findNode(state, command.data.actionId);
      if (node.erased) throw new InvalidCommandError(`action ${node.id} is erased; it has no text`);
      // The opening is prose written once; every other action is held to the action limit.
      const max = node.type === 'start' ? LIMITS.proseChars : LIMITS.actionChars;
      const text = checkText('text', command.data.text, { max, required: true });
      return [{ type: 'ActionEdited', data: { actionId: node.id, text, tokens: count(text) } }];
    }

    case 'EraseAction': {
      requireNoTurnInFlight(state);
      const node = findNode(state, command.data.actionId);
      if (node.type === 'start') {
        throw new InvalidCommandError('the opening cannot be erased; edit its text instead');
      }
      if (node.erased) return [];
      return [{ type: 'ActionErased', data: { actionId: node.id } }];
    }

    case 'CorrectNarrativeState': {
      requireNoTurnInFlight(state);
      const anchor = findNode(state, command.data.anchorActionId ?? state.head ?? '');
      if (!isOnPath(state, anchor.id)) {
        throw new InvalidCommandError(
          `action ${anchor.id} is not in the story at the head; correct the state at an action on it`,
        );
      }
      const correction = command.data.correction;
      const before =
        anchor.id === state.head ? state.narrative : narrativeAtDepth(state, anchor.depth);
      const result = tryCorrection(before, correction);
      if (!result.ok) throw new InvalidCommandError(`correction refused: ${result.reason}`);
      return [{ type: 'NarrativeStateCorrected', data: { anchorActionId: anchor.id, correction } }];
    }

    case 'ApplyCorrections': {
      // Each correction is decided on the state the ones before it leave.
      let current = state;
      const events: AdventureEvent[] = [];
      for (const correction of command.data.corrections) {
        const decided = decide(
          {
            type: 'CorrectNarrativeState',
            data: { correction, anchorActionId: command.data.anchorActionId },
          },
          current,
          context,
        );
        current = projectDecided(current, decided);
        events.push(...decided);
      }
      return events;
    }

    case 'RetconStateEvent': {
      requireNoTurnInFlight(state);
      const node = findNode(state, command.data.actionId);
      const { index } = command.data;
      if (node.type !== 'ai') {
        throw new InvalidCommandError(`action ${node.id} is not a narration; it has no events`);
      }
      if (!Number.isInteger(index) || index < 0 || index >= node.accepted.length) {
        throw new InvalidCommandError(
          `action ${node.id} has ${node.accepted.length} accepted events; index must be 0 to ${node.accepted.length - 1}`,
        );
      }
      if (node.retconned.includes(index)) return [];
      return [{ type: 'StateEventRetconned', data: { actionId: node.id, index } }];
    }

    default: {
      const unknown: { type: string } = command;
      throw new InvalidCommandError(`unknown command ${JSON.stringify(unknown.type)}`);
    }
  }
}

/**
 * A player's action. In a one-player adventure it starts a turn now (409 while one is in
 * flight); in a room the turn policy says what it does (round.decider.ts), and the actions it
 * writes record who sent them.
 */
function submitAction(
  data: Extract<AdventureCommand, { type: 'SubmitAction' }>['data'],
  state: AdventureState,
  count: (text: string) => number,
): AdventureEvent[] {
  const { inputType, turnId, actorId } = data;
  if (!['do', 'say', 'story', 'continue'].includes(inputType)) {
    throw new InvalidCommandError(
      `unknown action type ${JSON.stringify(inputType)}; use do, say, story or continue`,
    );
  }
  const room = isRoomTurn(state, actorId);
  if (!room) requireNoTurnInFlight(state);
  checkId('turnId', turnId);
  requireNewTurn(state, turnId);
  const actor = room ? { actorId } : {};
  if (inputType === 'continue') {
    const acted: AdventureEvent = {
      type: 'PlayerActed',
      data: { turnId, inputType, action: null, ...actor },
    };
    return room ? decideRoomAction(state, () => [acted], null, turnId) : [acted];
  }
  const actionId = checkId('actionId', data.actionId);
  requireNewAction(state, actionId);
  const max = LIMITS.actionChars;
  // In a room an action is written about the actor's character (`> Mira draws her sword.`).
  const character = room ? actingCharacterOf(state, actorId) : null;
  const text = formatPlayerInput(inputType, checkText('text', data.text, { max }), character) ?? '';
  checkText('text', text, { max });
  const acted: AdventureEvent & { type: 'PlayerActed' } = {
    type: 'PlayerActed',
    data: {
      turnId,
      inputType,
      action: { id: actionId, type: inputType, text, tokens: count(text) },
      ...actor,
    },
  };
  const now = () => (data.script ? scriptedSubmit(acted, data.script, state, count) : [acted]);
  // A script that stopped the action stops it whatever the policy: nothing waits.
  if (!room || data.script?.stopped) return now();
  // An action that waits (held, submitted) keeps the text an onInput script made of it; the
  // script's other effects need the story node it becomes, which a waiting action is not yet.
  const scripted = data.script ? storedScriptText(data.script) : text;
  return decideRoomAction(
    state,
    now,
    { id: actionId, type: inputType, text: scripted, tokens: count(scripted), actorId },
    turnId,
  );
}

/**
 * The log holds every token a user was charged: a call no other event records is its own
 * event. A call that cost nothing (the offline narrator or embedder), or one made for an
 * adventure that no longer exists, records nothing.
 */
function modelUsage(data: RecordModelUsage['data'], state: AdventureState): AdventureEvent[] {
  if (state.id === null || data.usage.promptTokens + data.usage.completionTokens <= 0) return [];
  return [
    {
      type: 'ModelUsageRecorded',
      data: {
        purpose: data.purpose,
        usage: data.usage,
        ...(data.turnId !== undefined && { turnId: data.turnId }),
      },
    },
  ];
}

function memoriesUsed(turnId: string, memoryIds: readonly string[] | undefined): MemoriesUsed[] {
  if (memoryIds === undefined || memoryIds.length === 0) return [];
  if (!Array.isArray(memoryIds) || memoryIds.some((id) => typeof id !== 'string')) {
    throw new InvalidCommandError('memoriesUsed must be a list of memory ids');
  }
  return [{ type: 'MemoriesUsed', data: { turnId, memoryIds: [...memoryIds] } }];
}

function create(
  data: Extract<AdventureCommand, { type: 'CreateAdventure' }>['data'],
  state: AdventureState,
  context: DecideContext,
): AdventureEvent[] {
  if (state.id !== null) throw new ConflictError(`adventure ${state.id} already exists`);
  const placeholders = data.placeholders ?? {};
  for (const [name, answer] of Object.entries(placeholders)) {
    checkText(`placeholders.${name}`, answer, { max: LIMITS.placeholderAnswerChars });
  }
  const prose = { max: LIMITS.proseChars };
  const opening = fillPlaceholders(
    checkText('opening', data.opening, { ...prose, required: true }),
    placeholders,
  );
  checkText('opening', opening, prose);
  const settings: AdventureSettings = {
    ...DEFAULT_SETTINGS,
    ...checkSettings(data.settings ?? {}),
  };
  checkCardCount((data.storyCards ?? []).length);
  const storyCards = (data.storyCards ?? []).map((card) => checkCard(card));
  const ids = new Set<string>();
  for (const card of storyCards) {
    if (ids.has(card.id)) throw new InvalidCommandError(`story card id ${card.id} is repeated`);
    ids.add(card.id);
  }
  const scripts = scriptsAdded(data.scripts ?? [], 0);
  return [
    {
      type: 'AdventureCreated',
      data: {
        adventureId: checkId('adventureId', data.adventureId),
        ownerId: checkId('ownerId', data.ownerId),
        title: checkText('title', data.title, { max: MAX_TITLE_CHARS, required: true }),
        opening,
        placeholders: { ...placeholders },
        plotEssentials: checkText('plotEssentials', data.plotEssentials ?? '', prose),
        authorsNote: checkText('authorsNote', data.authorsNote ?? '', prose),
        aiInstructions: checkText('aiInstructions', data.aiInstructions ?? '', prose),
        persona: checkPersona(data.persona ?? { name: '', pronouns: '', description: '' }),
        storyCards,
        canon: checkCanon(data.canon ?? { rules: [], forbiddenStatusChanges: [] }),
        settings,
        openingAction: {
          id: checkId('openingActionId', data.openingActionId),
          tokens: context.countTokens(opening, settings.encoding),
        },
      },
    },
    ...scripts,
  ];
}

function editAdventure(
  changes: Extract<AdventureCommand, { type: 'EditAdventure' }>['data'],
  state: AdventureState,
): AdventureEvent[] {
  const edited: AdventureEditedData = {};
  for (const key of Object.keys(changes)) {
    if (
      ![
        'title',
        'plotEssentials',
        'authorsNote',
        'aiInstructions',
        'persona',
        'canon',
        'settings',
      ].includes(key)
    ) {
      throw new InvalidCommandError(`${key} cannot be edited here`);
    }
  }
  if (changes.title !== undefined) {
    const title = checkText('title', changes.title, { max: MAX_TITLE_CHARS, required: true });
    if (title !== state.fields.title) edited.title = title;
  }
  for (const key of ['plotEssentials', 'authorsNote', 'aiInstructions'] as const) {
    if (changes[key] === undefined) continue;
    const text = checkText(key, changes[key], { max: LIMITS.proseChars });
    if (text !== state.fields[key]) edited[key] = text;
  }
  if (changes.persona !== undefined) {
    const persona = checkPersona(changes.persona);
    if (JSON.stringify(persona) !== JSON.stringify(state.fields.persona)) edited.persona = persona;
  }
  if (changes.canon !== undefined) {
    const canon = checkCanon(changes.canon);
    if (JSON.stringify(canon) !== JSON.stringify(state.fields.canon)) edited.canon = canon;
  }
  if (changes.settings !== undefined) {
    const settings = checkSettings(changes.settings);
    const changed = Object.fromEntries(
      Object.entries(settings).filter(
        ([key, value]) => state.settings[key as keyof AdventureSettings] !== value,
      ),
    );
    if (Object.keys(changed).length > 0) edited.settings = changed;
  }
  // Nothing that differs from the adventure as it is: a repeated PATCH appends nothing.
  if (Object.keys(edited).length === 0) return [];
  return [{ type: 'AdventureEdited', data: edited }];
}

function checkCard(input: StoryCardInput, { imported = false } = {}): StoryCard {
  if (typeof input !== 'object' || input === null) {
    throw new InvalidCommandError('a story card must be an object');
  }
  if (input.origin !== undefined && !imported) {
    throw new InvalidCommandError('card.origin is set by a lore import only; leave it out');
  }
  // The required fields first, then the optional ones the input has, each checked once: no rest
  // or spread copies (three of them per card were most of a 5,000-card create's decide).
  const { name, keys, entry, type, notes } = input;
  if (name === undefined) throw new InvalidCommandError('card.name is required');
  const card: Record<string, unknown> = {
    id: checkId('card.id', input.id),
    name: checkCardField('name', name),
    keys: keys === undefined ? '' : checkCardField('keys', keys),
    entry: entry === undefined ? '' : checkCardField('entry', entry),
    type: type === undefined ? 'other' : checkCardField('type', type),
    notes: notes === undefined ? '' : checkCardField('notes', notes),
  };
  for (const key in input) {
    if (!Object.prototype.hasOwnProperty.call(input, key) || key in card || key === 'origin') {
      continue;
    }
    card[key] = checkCardField(key, (input as unknown as Record<string, unknown>)[key]);
  }
  if (input.origin !== undefined) card.origin = checkCardOrigin(input.origin);
  return card as unknown as StoryCard;
}

/** Structural equality of two card field values (plain JSON data). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (b === null) return a === undefined;
  return typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b);
}

/** One lore file: every card checked, the count within the limit, nothing written unless all pass. */
function importCards(
  data: Extract<AdventureCommand, { type: 'ImportStoryCards' }>['data'],
  state: AdventureState,
): AdventureEvent[] {
  const mode = data.mode;
  if (mode !== 'merge' && mode !== 'replace') {
    throw new InvalidCommandError('mode must be "merge" or "replace"');
  }
  const bookId = checkId('book.id', data.book?.id);
  if (state.lorebooks.some((book) => book.id === bookId)) {
    throw new ConflictError(`lorebook ${bookId} is already imported; send a new id`);
  }
  const rawSize = JSON.stringify(data.book.raw ?? {}).length;
  if (rawSize > LIMITS.loreRawChars) {
    throw new InvalidCommandError(
      `the book's own fields are ${rawSize} characters of JSON; keep them to ${LIMITS.loreRawChars}`,
    );
  }
  const book = {
    id: bookId,
    format: checkCardOrigin({ format: data.book.format, bookId, raw: {} }).format,
    formatVersion:
      data.book.formatVersion === null
        ? null
        : checkText('book.formatVersion', data.book.formatVersion, { max: 40 }),
    name: checkText('book.name', data.book.name, { max: MAX_CARD_NAME_CHARS }),
    raw: data.book.raw ?? {},
  };
  if (!Array.isArray(data.cards)) throw new InvalidCommandError('cards must be a list');
  const removedCardIds = mode === 'replace' ? state.cards.map((card) => card.id) : [];
  // A replace drops the parked cards too; a merge keeps them, and they may come back.
  checkCardCount(data.cards.length + (mode === 'replace' ? 0 : cardsHeld(state)));
  const kept = mode === 'replace' ? new Set<string>() : cardIdsHeld(state);
  const cards = data.cards.map((input, index) => {
    const card = checkCard(input, { imported: true });
    if (kept.has(card.id)) {
      throw new ConflictError(
        `cards[${index}]: story card ${card.id} already exists; send a new id`,
      );
    }
    if (card.origin && card.origin.bookId !== bookId) {
      throw new InvalidCommandError(`cards[${index}].origin.bookId must be the book's id`);
    }
    kept.add(card.id);
    return card;
  });
  const skipped = Number.isInteger(data.skipped) && data.skipped >= 0 ? data.skipped : 0;
  const event: AdventureEvent = {
    type: 'StoryCardsImported',
    data: { book, mode, removedCardIds, cards, skipped },
  };
  // The source entries are foreign JSON: held to the bounds an import of the log holds every
  // event to (depth, list lengths, key and string sizes), so what is written can be moved.
  checkJsonValue('data', event.data);
  return [event];
}

function checkCardCount(count: number): void {
  if (count > LIMITS.storyCardsPerAdventure) {
    throw new LimitExceededError(
      `an adventure holds at most ${LIMITS.storyCardsPerAdventure} story cards (limit storyCardsPerAdventure); remove one first`,
    );
  }
}

function findCard(state: AdventureState, cardId: string): StoryCard {
  const card = state.cards.find((existing) => existing.id === cardId);
  if (!card) throw new NotFoundError(`story card ${cardId} not found in this adventure`);
  return card;
}

function findNode(state: AdventureState, actionId: string): ActionNode {
  const node = nodeOf(state, actionId);
  if (!node) throw new NotFoundError(`action ${actionId} not found in this adventure`);
  return node;
}

/** How many more actions back than a one-player turn's an undo may have to reach: a round's. */
function undoReach(state: AdventureState): number {
  return Object.keys(state.turns.actors).length === 0 ? 0 : roomPlayersOf(state).length;
}

function isPlayerAction(type: string | undefined): boolean {
  return type === 'do' || type === 'say' || type === 'story';
}

function requireNoTurnInFlight(state: AdventureState): void {
  if (state.inFlight) throw new TurnInFlightError(state.inFlight.turnId);
}

function requireTurnInFlight(state: AdventureState, turnId: string) {
  if (!state.inFlight || state.inFlight.turnId !== turnId) throw new TurnNotInFlightError(turnId);
  return state.inFlight;
}

function requireNewAction(state: AdventureState, actionId: string): void {
  if (nodeOf(state, actionId)) {
    throw new DuplicateActionError(actionId);
  }
}

function requireNewTurn(state: AdventureState, turnId: string): void {
  if (turnStatus(state, turnId)) {
    throw new ConflictError(`turn id ${turnId} is already used in this adventure; send a new id`);
  }
}
