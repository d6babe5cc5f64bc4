// What the owner's script commands append. Pure: ids come from the caller, and the syntax of a
// source is checked before a command is made (only a JavaScript engine can say, and the engine
// lives in the sandbox); sizes, names and the run order are checked here.
import {
  SCRIPT_LIMITS,
  sourceSizeProblems,
  type CardOp,
  type SandboxCard,
} from '@chronicle/scripting';
import type { AdventureEvent, PlayerActed, StoryCard } from './adventure.events';
import { LIMITS } from './adventure.limits';
import {
  InvalidCommandError,
  LimitExceededError,
  NotFoundError,
  ConflictError,
} from './adventure.errors';
import type { AdventureState } from './adventure.state';
import { checkId, checkText } from './adventure.validation';
import { cardIdsHeld } from './script-cards.projector';
import {
  SCRIPT_LOG_LINE_CHARS,
  SCRIPT_LOG_LINES_KEPT,
  type ScriptChanges,
  type ScriptEvent,
  type ScriptHookName,
  type ScriptHookRanData,
  type ScriptRecord,
} from './script.events';

export interface ScriptInput {
  id: string;
  name: string;
  library?: string;
  input?: string;
  context?: string;
  output?: string;
  enabled?: boolean;
}

export type ScriptCommand =
  | { type: 'AddScript'; data: { script: ScriptInput } }
  | { type: 'EditScript'; data: { scriptId: string; changes: ScriptChanges } }
  | { type: 'RemoveScript'; data: { scriptId: string } }
  | { type: 'ReorderScripts'; data: { ids: string[] } };

const SOURCE_KEYS = ['library', 'input', 'context', 'output'] as const;

function checkSources(changes: ScriptChanges): void {
  for (const key of SOURCE_KEYS) {
    const value = changes[key];
    if (value !== undefined && typeof value !== 'string') {
      throw new InvalidCommandError(`${key} must be a string of JavaScript`);
    }
  }
  const problems = sourceSizeProblems(changes);
  if (problems.length > 0) {
    throw new LimitExceededError(problems.map((p) => p.message).join('; '));
  }
}

function checkName(name: unknown): string {
  return checkText('name', name, { max: SCRIPT_LIMITS.nameChars, required: true });
}

function requireScript(state: AdventureState, scriptId: string): ScriptRecord {
  const script = state.scripts.find((s) => s.id === scriptId);
  if (!script) throw new NotFoundError(`script ${scriptId} not found in this adventure`);
  return script;
}

/** The scripts a CreateAdventure or an AddScript brings: checked, as ScriptAdded events. */
export function scriptsAdded(inputs: readonly ScriptInput[], existing: number): ScriptEvent[] {
  if (existing + inputs.length > SCRIPT_LIMITS.scriptsPerAdventure) {
    throw new LimitExceededError(
      `an adventure holds at most ${SCRIPT_LIMITS.scriptsPerAdventure} scripts; remove one first`,
    );
  }
  const ids = new Set<string>();
  return inputs.map((input) => {
    const id = checkId('script.id', input.id);
    if (ids.has(id)) throw new ConflictError(`script ${id} is given twice; send a new id`);
    ids.add(id);
    const script: ScriptRecord = {
      id,
      name: checkName(input.name),
      library: input.library ?? '',
      input: input.input ?? '',
      context: input.context ?? '',
      output: input.output ?? '',
      enabled: input.enabled ?? true,
      version: 1,
    };
    checkSources(script);
    if (typeof script.enabled !== 'boolean') {
      throw new InvalidCommandError('enabled must be true or false');
    }
    return { type: 'ScriptAdded', data: { script } };
  });
}

export function decideScript(command: ScriptCommand, state: AdventureState): ScriptEvent[] {
  if (state.id === null) throw new NotFoundError('adventure not found; create it first');
  switch (command.type) {
    case 'AddScript': {
      if (state.scripts.some((s) => s.id === command.data.script.id)) {
        throw new ConflictError(`script ${command.data.script.id} already exists; send a new id`);
      }
      return scriptsAdded([command.data.script], state.scripts.length);
    }
    case 'EditScript': {
      const script = requireScript(state, command.data.scriptId);
      const changes = { ...command.data.changes };
      if (changes.name !== undefined) changes.name = checkName(changes.name);
      if (changes.enabled !== undefined && typeof changes.enabled !== 'boolean') {
        throw new InvalidCommandError('enabled must be true or false');
      }
      checkSources(changes);
      const changed = Object.fromEntries(
        Object.entries(changes).filter(
          ([key, value]) => value !== undefined && script[key as keyof ScriptRecord] !== value,
        ),
      ) as ScriptChanges;
      if (Object.keys(changed).length === 0) return [];
      return [{ type: 'ScriptEdited', data: { scriptId: script.id, changes: changed } }];
    }
    case 'RemoveScript':
      requireScript(state, command.data.scriptId);
      return [{ type: 'ScriptRemoved', data: { scriptId: command.data.scriptId } }];
    case 'ReorderScripts': {
      const ids = command.data.ids;
      const current = state.scripts.map((s) => s.id);
      const same =
        Array.isArray(ids) &&
        ids.length === current.length &&
        new Set(ids).size === ids.length &&
        ids.every((id) => current.includes(id));
      if (!same) {
        throw new InvalidCommandError(
          `ids must list every script of the adventure once, in the new order: ${current.join(', ')}`,
        );
      }
      if (ids.every((id, i) => current[i] === id)) return [];
      return [{ type: 'ScriptsReordered', data: { ids: [...ids] } }];
    }
  }
}

/** A hook chain's effects, as a command carries them to the decider. */
export type ScriptEffects = Pick<ScriptedInput, 'runs' | 'states' | 'cardOps' | 'messages'>;

/** Whether an Output hook that counted changed the narration (its text is then the script's). */
export function outputScriptChangedText(output: ScriptEffects | undefined): boolean {
  return !!output?.runs.some((run) => run.outcome === 'ok' && run.textChanged);
}

const SCRIPT_COMMANDS = new Set(['AddScript', 'EditScript', 'RemoveScript', 'ReorderScripts']);

export function isScriptCommand(command: { type: string }): command is ScriptCommand {
  return SCRIPT_COMMANDS.has(command.type);
}

/** What an onInput chain produced, as the API hands it to the decider with SubmitAction. */
export interface ScriptedInput {
  /** The chain's text (formatted as the player action is stored), unless it stopped. */
  text: string;
  stopped: boolean;
  stopMessage: string;
  /** The script that stopped the chain. */
  stoppedBy: string | null;
  runs: Omit<ScriptHookRanData, 'turnId'>[];
  states: Record<string, Record<string, unknown>>;
  cardOps: { scriptId: string; op: CardOp }[];
  messages: { scriptId: string; message: { text: string; visibleTo?: string[] } }[];
}

const NUL = String.fromCharCode(0);
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Script text made storable: the decider's text rules refuse what a player could fix. */
/** The text an onInput chain left, as a player action stores it. */
export function storedScriptText(script: ScriptedInput): string {
  return storableText(script.text ?? '', LIMITS.actionChars);
}

export function storableText(text: string, max: number): string {
  return text.replaceAll(NUL, '').replace(LONE_SURROGATES, '\uFFFD').slice(0, max);
}

function cardFromScript(card: SandboxCard): StoryCard {
  return {
    id: card.id.slice(0, LIMITS.idChars),
    name: storableText(card.title, LIMITS.cardNameChars),
    keys: storableText(card.keys, LIMITS.proseChars),
    entry: storableText(card.entry, LIMITS.proseChars),
    type: storableText(card.type, LIMITS.cardNameChars),
    notes: storableText(card.description, LIMITS.proseChars),
  };
}

/**
 * The events of one hook's script effects, attached to `actionId` (the story node the turn
 * wrote, or the head when the turn stopped before writing one): every run, each changed
 * state, the card changes, the messages.
 */
// eslint-disable-next-line max-lines-per-function -- the events of one hook's effects in the order a replay folds them (runs, states, cards, messages); split, that order would be spread over helpers
export function scriptEffects(
  turnId: string,
  hook: ScriptHookName,
  actionId: string,
  result: Pick<ScriptedInput, 'runs' | 'states' | 'cardOps' | 'messages'>,
  state: AdventureState,
  /** The card ids after earlier hooks of the same append (kept up to date here). */
  cards: Set<string> = cardIdsHeld(state),
): AdventureEvent[] {
  const events: AdventureEvent[] = [];
  for (const run of result.runs) {
    events.push({
      type: 'ScriptHookRan',
      data: {
        ...run,
        turnId,
        logs: run.logs
          .slice(0, SCRIPT_LOG_LINES_KEPT)
          .map((line) => storableText(line, SCRIPT_LOG_LINE_CHARS)),
        ...(run.error ? { error: storableText(run.error, SCRIPT_LOG_LINE_CHARS) } : {}),
      },
    });
  }
  const known = new Set(state.scripts.map((s) => s.id));
  for (const [scriptId, scriptState] of Object.entries(result.states)) {
    if (!known.has(scriptId)) continue;
    events.push({ type: 'ScriptStateChanged', data: { scriptId, actionId, state: scriptState } });
  }
  for (const { scriptId, op } of result.cardOps) {
    const source = { scriptId, hook, turnId };
    switch (op.op) {
      case 'added': {
        // A script never makes the turn fail: a card past the adventure's limit is not kept.
        if (cards.size >= LIMITS.storyCardsPerAdventure) continue;
        const card = cardFromScript(op.card);
        if (cards.has(card.id)) continue;
        cards.add(card.id);
        events.push({ type: 'StoryCardAdded', data: { card, source } });
        break;
      }
      case 'updated': {
        if (!cards.has(op.id)) continue;
        const full = cardFromScript({
          id: op.id,
          title: op.fields.title ?? '',
          keys: op.fields.keys ?? '',
          type: op.fields.type ?? '',
          entry: op.fields.entry ?? '',
          description: op.fields.description ?? '',
        });
        const changes: Partial<Omit<StoryCard, 'id'>> = {};
        if (op.fields.title !== undefined) changes.name = full.name;
        if (op.fields.keys !== undefined) changes.keys = full.keys;
        if (op.fields.type !== undefined) changes.type = full.type;
        if (op.fields.entry !== undefined) changes.entry = full.entry;
        if (op.fields.description !== undefined) changes.notes = full.notes;
        events.push({ type: 'StoryCardEdited', data: { cardId: op.id, changes, source } });
        break;
      }
      case 'removed':
        if (!cards.has(op.id)) continue;
        cards.delete(op.id);
        events.push({ type: 'StoryCardRemoved', data: { cardId: op.id, source } });
        break;
      case 'reordered':
        events.push({
          type: 'StoryCardsReordered',
          data: { order: op.order.filter((id) => cards.has(id)), source },
        });
        break;
    }
  }
  for (const { scriptId, message } of result.messages) {
    events.push({
      type: 'ScriptMessagePosted',
      data: {
        turnId,
        scriptId,
        message: message.text,
        ...(message.visibleTo ? { visibleTo: message.visibleTo } : {}),
      },
    });
  }
  return events;
}

/**
 * SubmitAction after onInput: the player action stores the script's text (the typed text kept
 * beside it), or, when a script stopped the turn, no action is written at all and the turn
 * ends as `TurnStoppedByScript`. The effects go in the same append.
 */
export function scriptedSubmit(
  acted: PlayerActed,
  script: ScriptedInput,
  state: AdventureState,
  countTokens: (text: string) => number,
): AdventureEvent[] {
  const { turnId, action } = acted.data;
  if (!action) return [acted];
  if (script.stopped) {
    return [
      {
        type: 'TurnStoppedByScript',
        data: {
          turnId,
          hook: 'input',
          scriptId: script.stoppedBy ?? '',
          message: storableText(script.stopMessage, SCRIPT_LIMITS.messageChars),
        },
      },
      ...scriptEffects(turnId, 'input', state.head ?? '', script, state),
    ];
  }
  const text = storableText(script.text, LIMITS.actionChars);
  const scripted: PlayerActed =
    text === action.text
      ? acted
      : {
          type: 'PlayerActed',
          data: {
            ...acted.data,
            action: { ...action, text, tokens: countTokens(text) },
            typedText: action.text,
          },
        };
  return [scripted, ...scriptEffects(turnId, 'input', action.id, script, state)];
}
