import { createHash } from 'node:crypto';
import {
  chaptersPastSummary,
  excludedActionId,
  narrativeForTurn,
  nodeOf,
  playerActionsOfTurn,
  roomCharacters,
  scriptStateAtHead,
  storyActionCount,
  storyPath,
  storySummary,
  storyTail,
  type AdventureState,
  type PathEntry,
  type StoryCard,
} from '@chronicle/adventure';
import {
  assembleContext,
  CARD_BUDGET_SHARE,
  contextBudget,
  NPC_WINDOW,
  SEPARATOR,
  tokenizer,
  type BuiltContext,
  type ContextHead,
  type ReadOlder,
  type RecalledPassages,
  type RetrievedMemories,
  type StoryCard as ContextStoryCard,
  type TimedLoreFiring,
  type WindowAction,
} from '@chronicle/context';
import { defuseStateFences } from '@chronicle/narrative';
import { mergeScriptMemory, scriptMemoryOf, type ScriptMemory } from '@chronicle/scripting';

// The prompt of one turn, from the projection: the head's fields as the context builder wants
// them, and a reader that pulls the history window's texts from the log by version. The context
// worker narrates with it and the API's context preview shows it, so both build the same bytes.

/** The predecessor's default narrator prompt, so stories read alike; adventures have no prompt of their own yet. */
export const DEFAULT_NARRATOR_PROMPT =
  'You are a masterful storyteller. Continue the story in the second person, consistent and ' +
  'vivid. Never speak or act for the player, never break character, and never conclude the story.';

/**
 * A room's narrator prompt: its actions name their characters in the third person, and the
 * story goes on that way; the player section (libs/context) says who the characters are.
 */
export const ROOM_NARRATOR_PROMPT =
  'You are a masterful storyteller. Continue the story in the third person, consistent and ' +
  'vivid. Several players share it, each playing one character: never speak or act for any of ' +
  'their characters, never break character, and never conclude the story.';

export interface TurnContextOptions {
  /** The model when the adventure names none (MODEL_NAME). */
  defaultModel: string;
  narratorPrompt?: string;
  /** The memory bank's retrieval, or null when the bank is off. */
  memories?: RetrievedMemories | null;
  /** Recall's candidates (libs/memory-store's StoryRecallService), or null when the bank is off. */
  passages?: RecalledPassages | null;
}

/** Everything but the story window, from the projection at the head. */
export function turnContextHead(state: AdventureState, options: TurnContextOptions): ContextHead {
  const { settings, fields } = state;
  // In a room the prompt names every active player's character; one player keeps the persona.
  const players = roomCharacters(state);
  return {
    settings: {
      narratorPrompt:
        options.narratorPrompt ?? (players ? ROOM_NARRATOR_PROMPT : DEFAULT_NARRATOR_PROMPT),
      model: settings.model || options.defaultModel,
      apiMode: settings.apiMode,
      temperature: settings.temperature,
      maxOutputTokens: settings.maxOutputTokens,
      contextTokenBudget: settings.contextTokenBudget,
      encoding: settings.encoding,
      historyMode: settings.historyMode,
    },
    persona: fields.persona,
    ...(players && { players }),
    // The player's words enter the prompt with their state fences defused (see storyReader).
    plotEssentials: defuseStateFences(fields.plotEssentials),
    authorsNote: defuseStateFences(fields.authorsNote),
    aiInstructions: defuseStateFences(fields.aiInstructions),
    canon: fields.canon,
    // The same objects for the same projection cards, so the lore matcher recognises an
    // unchanged book by them and skips recompiling it.
    storyCards: contextCardsOf(state.cards),
    // The newest summary version on the current path: one written past an undone action is
    // already out of it.
    storySummary: storySummary(state),
    ...storyChaptersOf(state),
    // While a retry is in flight this is the state before the take being replaced.
    narrativeState: narrativeForTurn(state),
    // `state.memory` of the enabled scripts at the head, a later script winning per field: set
    // in onInput it is this turn's (the player action holds it); set in onModelContext or
    // onOutput it is the narration's, so the next turn's (the seed's timing).
    scriptMemory: scriptMemoryAtHead(state),
    totalActions: storyActionCount(state),
    storyTokens: storyTokens(state),
    // The memories as the report shows them: a retrieval result's cost and passages are not.
    memories: options.memories
      ? {
          used: options.memories.used,
          ...(options.memories.error !== undefined && { error: options.memories.error }),
        }
      : null,
    ...(options.passages && { passages: options.passages }),
    excludeActionId: excludedActionId(state),
    // The turn in flight seeds the lore's random macros; its id is in the log, so a rebuild of
    // the turn draws the same.
    loreSeed: state.inFlight?.turnId ?? '',
    timedLore: timedLoreOnPath(state),
  };
}

/** The chapters past the summary on the path, when there are any (the chaptered summary). */
function storyChaptersOf(state: AdventureState): Pick<ContextHead, 'storyChapters'> {
  const chapters = chaptersPastSummary(state);
  if (chapters.length === 0) return {};
  return {
    storyChapters: chapters.map(({ text, sourceStart, sourceEnd }) => ({
      text: defuseStateFences(text),
      sourceStart,
      sourceEnd,
    })),
  };
}

/**
 * The prompt's view of an adventure's card: its lore fields, without the player's notes or the
 * imported source. The one place the adventure's card becomes libs/context's: a new lore field
 * is one more line here. An absent field stays absent (the matcher's defaults apply).
 */
export function contextCardOf(card: StoryCard): ContextStoryCard {
  const { id, name, keys, entry, type } = card;
  return {
    id,
    name,
    keys,
    entry,
    type,
    ...(card.keySyntax !== undefined && { keySyntax: card.keySyntax }),
    ...(card.enabled !== undefined && { enabled: card.enabled }),
    ...(card.activation !== undefined && { activation: card.activation }),
    ...(card.priority !== undefined && { priority: card.priority }),
    ...(card.caseSensitive !== undefined && { caseSensitive: card.caseSensitive }),
    ...(card.wholeWords !== undefined && { wholeWords: card.wholeWords }),
    ...(card.scan !== undefined && { scan: card.scan }),
    ...(card.conditions !== undefined && { conditions: card.conditions }),
    ...(card.placement !== undefined && { placement: card.placement }),
    ...(card.recursion !== undefined && { recursion: card.recursion }),
    ...(card.charName !== undefined && { charName: card.charName }),
    ...(card.probability !== undefined && { probability: card.probability }),
    ...(card.group !== undefined && { group: card.group }),
    ...(card.timing !== undefined && { timing: card.timing }),
    ...(card.budget !== undefined && { budget: card.budget }),
  };
}

// Projection cards never change in place (an edit makes a new card object, an event a new list),
// so a mapped card or list is reused for as long as its source is alive: a turn on an unchanged
// book hands the matcher the very objects of the last turn, and maps none again.
const mappedCards = new WeakMap<StoryCard, ContextStoryCard>();
const mappedLists = new WeakMap<readonly StoryCard[], ContextStoryCard[]>();

/** `contextCardOf` over a projection's card list, the same objects for the same cards. */
export function contextCardsOf(cards: readonly StoryCard[]): ContextStoryCard[] {
  let list = mappedLists.get(cards);
  if (!list) {
    list = cards.map((card) => {
      let mapped = mappedCards.get(card);
      if (!mapped) {
        mapped = contextCardOf(card);
        mappedCards.set(card, mapped);
      }
      return mapped;
    });
    mappedLists.set(cards, list);
  }
  return list;
}

/**
 * The cards whose sticky or cooldown started on the turns of the path that can still hold one:
 * each AI node's `timedLore` (its narration's manifest), `ago` = this turn's path depth minus
 * the node's. The take a retry replaces is not on the path it is retried on. Absent when no card
 * has a timer, so a book without them walks nothing.
 */
export function timedLoreOnPath(state: AdventureState): TimedLoreFiring[] | undefined {
  let horizon = 0;
  for (const card of state.cards) {
    const timing = card.timing;
    if (timing) horizon = Math.max(horizon, (timing.sticky ?? 0) + (timing.cooldown ?? 0));
  }
  if (horizon === 0) return undefined;
  const excluded = excludedActionId(state);
  const path = state.path;
  // The depth this turn's narration takes: the replaced take's on a retry, else the next one.
  const position =
    excluded !== null && path.at(-1)?.id === excluded ? path.length - 1 : path.length;
  const fired: TimedLoreFiring[] = [];
  for (let depth = Math.min(path.length, position) - 1; depth >= 0; depth--) {
    const ago = position - depth;
    if (ago > horizon) break;
    const entry = path[depth];
    if (entry.type !== 'ai' || entry.id === excluded) continue;
    for (const cardId of nodeOf(state, entry.id)?.timedLore ?? []) fired.push({ cardId, ago });
  }
  return fired;
}

/** The merged `state.memory` of the enabled scripts at the head, or null when none sets any. */
export function scriptMemoryAtHead(state: AdventureState): Record<string, unknown> | null {
  const exclude = excludedActionId(state);
  let merged: ScriptMemory = {};
  for (const script of state.scripts) {
    if (!script.enabled) continue;
    merged = mergeScriptMemory(
      merged,
      scriptMemoryOf(scriptStateAtHead(state, script.id, exclude)),
    );
  }
  return Object.keys(merged).length > 0 ? { ...merged } : null;
}

/**
 * Every story action's tokens plus a separator, from the story's start: where the window's
 * actions lie, for the `stable` history's block starts. From the path's cached counts.
 */
export function storyTokens(state: AdventureState): number {
  const separator = tokenizer(state.settings.encoding).countCached(SEPARATOR);
  let total = 0;
  for (const entry of storyPath(state)) total += entry.tokens + separator;
  return total;
}

/** Tokens a retrieved memory may take in the prompt, for the floor below (~50 words, a margin). */
const RETRIEVED_MEMORY_ALLOWANCE = 120;

/**
 * The least the next prompt's history may use: its budget once the lore has taken its most
 * and the retrieved memories their allowance (the memory worker does not retrieve). The memory
 * worker keeps the summary current against a `stable` window sized by it.
 */
export function historyBudgetFloor(state: AdventureState): number {
  const head = turnContextHead(state, { defaultModel: '' });
  const recent = storyTail(state, NPC_WINDOW).map((entry): WindowAction => {
    const node = nodeOf(state, entry.id);
    return {
      id: entry.id,
      type: entry.type,
      text: '',
      tokens: entry.tokens,
      ...(entry.type === 'ai' && node?.rejected.length ? { rejections: node.rejected } : {}),
    };
  });
  const memories = state.settings.memoryBankEnabled
    ? state.settings.memoryTopK * RETRIEVED_MEMORY_ALLOWANCE
    : 0;
  const { available } = contextBudget(head, recent);
  return Math.max(0, Math.floor((available - memories) * (1 - CARD_BUDGET_SHARE)));
}

export interface ActionTextReader {
  readActionTexts(
    adventureId: string,
    entries: readonly { id: string; textVersion: number }[],
  ): Promise<string[]>;
}

/**
 * Reads the story at the head from its newest end. The path (ids, types, cached token counts)
 * is in the projection; only the texts of the rows asked for are read, so a turn of a long
 * story reads its window and not the whole story. The texts come defused: a state fence the
 * player typed is no fence in the prompt, so a model repeating it opens no block (the cached
 * counts are of the defused text: see countTokens).
 */
export function storyReader(store: ActionTextReader, state: AdventureState): ReadOlder {
  const path = storyPath(state);
  const adventureId = state.id ?? '';
  return async (alreadyRead, count) => {
    const end = Math.max(0, path.length - alreadyRead);
    const rows: PathEntry[] = path.slice(Math.max(0, end - count), end);
    if (rows.length === 0) return [];
    const texts = await store.readActionTexts(adventureId, rows);
    return rows.map((entry, i): WindowAction => {
      const node = nodeOf(state, entry.id);
      return {
        id: entry.id,
        type: entry.type,
        text: defuseStateFences(texts[i]),
        tokens: entry.tokens,
        ...(entry.type === 'ai' && node?.rejected.length ? { rejections: node.rejected } : {}),
      };
    });
  };
}

/**
 * What the player wrote for the turn in flight, as stored: the texts of `playerActionsOfTurn`
 * (the turn's recall searches with them).
 */
export async function playerTextOfTurn(
  store: ActionTextReader,
  state: AdventureState,
): Promise<string> {
  const rows = playerActionsOfTurn(state);
  if (rows.length === 0) return '';
  return (await store.readActionTexts(state.id ?? '', rows)).join('\n\n');
}

/** The turn's prompt: the budget sized on the newest slice, a covering window, the build. */
export function buildTurnContext(
  store: ActionTextReader,
  state: AdventureState,
  options: TurnContextOptions,
): Promise<BuiltContext> {
  return assembleContext(turnContextHead(state, options), storyReader(store, state));
}

export interface ContextManifest {
  [key: string]: unknown;
  sections: { label: string; tokens: number }[];
  tokens: { total: number; budget: number };
  cards: BuiltContext['report']['cards'];
  /** `sources`: the story actions each memory was written from (absent before they were recorded). */
  memories: { id: string; similarity: number; pinned: boolean; sources?: string[] }[] | null;
  memoryError: string | null;
  /**
   * The recalled passages the prompt carried, in prompt order, with their scores (absent when
   * the bank was off): a rebuild reads their texts back from the log.
   */
  passages?: NonNullable<BuiltContext['report']['passages']>;
  history: BuiltContext['report']['history'];
  /** The history mode, its fill and the cached share the next request can expect. */
  cache: BuiltContext['report']['cache'];
  settings: BuiltContext['report']['settings'];
  /** The cards whose timed effects this prompt started (folded into the AI node, see timedLore). */
  timedLore?: string[];
  /** sha256 (hex) of the system and story texts as sent, so an audit can check a rebuild. */
  sha256: { system: string; story: string };
}

/**
 * What a Narrated event keeps of the context report. The texts are left out (a prompt is tens
 * of kilobytes and is rebuilt from the log at that version); their hashes stay, so a rebuild
 * can be checked byte for byte.
 */
export function contextManifest(built: BuiltContext): ContextManifest {
  const { report } = built;
  return {
    sections: report.sections.map(({ label, tokens }) => ({ label, tokens })),
    tokens: report.tokens,
    cards: report.cards,
    memories: report.memories
      ? report.memories.used.map(({ id, similarity, pinned, sources }) => ({
          id,
          similarity,
          pinned,
          ...(sources && { sources }),
        }))
      : null,
    memoryError: report.memories?.error ?? null,
    ...(report.passages && { passages: report.passages }),
    history: report.history,
    cache: report.cache,
    settings: report.settings,
    ...(report.timedLore && { timedLore: report.timedLore }),
    sha256: { system: sha256(built.system), story: sha256(built.story) },
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
