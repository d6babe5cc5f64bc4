// Kept whole past 400 lines (eslint's max-lines, which skips comments, counts fewer): types only,
// mostly doc comments; buildContext's whole contract (its input, its sections, its report) reads
// in one place.
import type { Canon, NarrativeState, Rejection } from '@chronicle/narrative';
import type { StoryChapter } from './memory.budget';
import type { HistoryMode } from './prompt-cache';
import type { TokenEncoding } from './tokenizer';

export type ActionType = 'start' | 'do' | 'say' | 'story' | 'continue' | 'ai';

/** A story action as the context needs it: prose only, with its cached token count. */
export interface WindowAction {
  id: string;
  type: ActionType;
  /** Prose only; the state block is never stored in it (see the builder's history note). */
  text: string;
  /**
   * `text`'s token count in the adventure's encoding, computed once when the action was stored.
   * Assembly trusts it and never re-encodes the text.
   */
  tokens: number;
  /** The referee's rejections of this AI turn's state block. */
  rejections?: Rejection[];
}

/**
 * Reads the story from its newest end: up to `count` story actions older than the `alreadyRead`
 * newest ones, newest last. Fewer than `count` means the story ran out.
 */
export type ReadOlder = (alreadyRead: number, count: number) => Promise<WindowAction[]>;
export type ReadOlderSync = (alreadyRead: number, count: number) => WindowAction[];

export interface ContextSettings {
  narratorPrompt: string;
  model: string;
  apiMode: 'chat' | 'completion';
  temperature: number;
  maxOutputTokens: number;
  contextTokenBudget: number;
  /** Defaults to cl100k_base. Cached action token counts must be in this encoding. */
  encoding?: TokenEncoding;
  /**
   * How the history window chooses its first action (default `stable`): `stable` moves it only
   * to block starts counted from the story's start (see `stableStart`), `sliding` is the seed's
   * window, whose first action moves on every turn once the story outgrows the budget.
   */
  historyMode?: HistoryMode;
  /**
   * `stable`'s block size as a share of `contextTokenBudget` (default `STABLE_BLOCK_SHARE`). Not
   * an adventure setting: the benchmark sweeps it to show why the default was chosen.
   */
  historyBlockShare?: number;
  /**
   * The share of the history's budget recalled passages take when any is recalled (default
   * `RECALL_SHARE`). Not an adventure setting: the recall bench sweeps it.
   */
  recallShare?: number;
}

export interface Persona {
  name: string;
  pronouns: string;
  description: string;
}

/**
 * How a card's `keys` text splits into keys. `plain` (native cards): comma-separated, each key
 * trimmed. `aid` (AI Dungeon): comma-separated and never trimmed, because AID's guard keys such
 * as `" Bob "` rely on their spaces. `lines` (imports from list formats: SillyTavern, Character
 * Card books, NovelAI): one key per line, trimmed, so a key may hold a comma (`/a{1,3}/`).
 */
export type KeySyntax = 'plain' | 'aid' | 'lines';

/** `keys`: fires on its keys; `always`: every turn; `inert`: never sent (config cards, scripts). */
export type CardActivation = 'keys' | 'always' | 'inert';

/**
 * A secondary-key condition: `anyOf` (at least one present), `allOf` (all present), `noneOf`
 * (none present), `notAllOf` (at least one absent). A card fires when a primary key matches and
 * every condition holds. Empty key lists hold.
 */
export type ConditionMode = 'anyOf' | 'allOf' | 'noneOf' | 'notAllOf';

export interface CardCondition {
  mode: ConditionMode;
  keys: string[];
}

/**
 * Where a fired card's entry goes. `lore` (default): the live "World Lore" block. `depth`: into
 * the history, `depth` actions from its end, as a message of `role` in chat mode (see
 * BuiltContext.storyRoles; a completion prompt has it inline). `authorsNote`: beside the
 * author's note, wherever the history mode puts it, before it (`edge: 'top'`) or after it
 * (`bottom`, the default): SillyTavern's "top/bottom of Author's Note". A card with
 * `activation: 'always'` and `lore` placement goes to the static block.
 */
export interface CardPlacement {
  kind: 'lore' | 'depth' | 'authorsNote';
  depth?: number;
  role?: StoryRole['role'];
  edge?: 'top' | 'bottom';
}

/** The part of the trigger window a card reads: its last `actions` actions or `chars` characters. */
export interface CardScan {
  actions?: number;
  chars?: number;
}

/**
 * Recursion: a fired card's entry is scanned for other cards' keys, up to MAX_LORE_RECURSION
 * steps. Absent = no recursion (the seed's behaviour). `feedsOthers` false: this entry is not
 * scanned (SillyTavern's preventRecursion); `triggeredByOthers` false: only the story fires it
 * (excludeRecursion); `delayLevel` n: fires only from recursion step n on (delayUntilRecursion).
 */
export interface CardRecursion {
  feedsOthers: boolean;
  triggeredByOthers: boolean;
  delayLevel?: number;
}

export interface StoryCard {
  id: string;
  name: string;
  /** Trigger keys, split per `keySyntax`. A key shaped `/pattern/flags` is a regular expression. */
  keys: string;
  entry: string;
  type: string;
  // Every field below is optional; absent, the card behaves as the seed's cards did.
  /** Default `plain`. */
  keySyntax?: KeySyntax;
  /** Default true; a disabled card never fires. */
  enabled?: boolean;
  /** Default `keys`. */
  activation?: CardActivation;
  /**
   * Default 100. Higher is considered first for the lore budget and rendered later (closer to
   * the story's end); equal priorities keep card order.
   */
  priority?: number;
  /** Default: ignore case, match inside words (the seed's rule). */
  caseSensitive?: boolean;
  wholeWords?: boolean;
  /** Default: the whole window history could fill. */
  scan?: CardScan;
  conditions?: CardCondition[];
  placement?: CardPlacement;
  recursion?: CardRecursion;
  /** What `{{char}}` renders as in this card (the character a card-embedded book belongs to). */
  charName?: string;
  /**
   * Percent chance (0..100) that a card which fired is kept, drawn from the turn's seed
   * (`ContextHead.loreSeed`), so a rebuild of the turn draws the same. Default 100.
   */
  probability?: number;
  /** Inclusion groups: of the fired cards sharing a group name, one is kept (see CardGroup). */
  group?: CardGroup;
  /** Timed effects (see CardTiming). */
  timing?: CardTiming;
  /** Its own share of the lore budget and how it may be cut to fit (see CardBudget). */
  budget?: CardBudget;
}

/**
 * NovelAI's per-entry budget, inside the lore budget. A value over 1 is tokens; one in (0, 1] a
 * share of the context budget (NovelAI's fractions). `maxTokens`: the most this entry may take.
 * `reservedTokens` > 0: budgeted before the cards without a reservation (highest priority first
 * among the reserved), so it displaces them. `trim`: what an entry that does not fit loses,
 * `end` (NovelAI's trimBottom) or `start` (trimTop), cut back to a whole `trimUnit` (the finest
 * unit a cut may end on; default `sentence`); `none` (the default, NovelAI's doNotTrim): it is
 * left out whole, as every card without a budget is.
 */
export interface CardBudget {
  maxTokens?: number;
  reservedTokens?: number;
  trim?: 'none' | 'end' | 'start';
  trimUnit?: 'newline' | 'sentence' | 'token';
}

/**
 * Timed effects, in story actions on the current path, derived from the branch itself (the
 * turns on it that fired the card, `ContextHead.timedLore`), so undo, retry and a branch switch
 * never leak them (SillyTavern keeps them in chat metadata and drops what a rewind passes).
 * `delay`: cannot fire before the story has this many actions (ST's delay, V3's
 * @@activate_only_after). `sticky`: once fired, stays in the prompt, keys or not, on every turn
 * whose story is at most this many actions past the one it fired on. `cooldown`: after that
 * (after firing, without sticky), cannot fire for this many more actions.
 */
export interface CardTiming {
  delay?: number;
  sticky?: number;
  cooldown?: number;
}

/**
 * A card that started its timed effects on an earlier turn of the path: `ago` story actions
 * before this turn's story (its narration's path depth from this turn's).
 */
export interface TimedLoreFiring {
  cardId: string;
  ago: number;
}

/**
 * SillyTavern's inclusion groups: per group, the highest-priority `override` member wins, else one
 * member drawn by `weight` (default 100) from the turn's seed. A card in several groups must win
 * each.
 */
export interface CardGroup {
  names: string[];
  weight?: number;
  override?: boolean;
}

export interface UsedMemory {
  id: string;
  text: string;
  similarity: number;
  pinned: boolean;
  /**
   * The story actions it was written from (empty for a hand-written memory): the report cites
   * them, and `GET …/memories/:memoryId/sources` expands them. Absent where not known.
   */
  sources?: string[];
}

/** The memory bank's retrieval result, reported as-is. */
export interface RetrievedMemories {
  used: UsedMemory[];
  error?: string;
}

/**
 * A passage of the story recalled for this turn (libs/memory-store's StoryRecallService): the
 * story's own text, cited by its action, with the scores that chose it.
 */
export interface RecalledPassage {
  actionId: string;
  type: ActionType;
  /** As the history shows it (state fences defused). */
  text: string;
  /** `text`'s cached token count, as the history's actions carry theirs. */
  tokens: number;
  /** Its depth on the path: recalled passages go into the prompt in story order. */
  position: number;
  /** 1-based rank in the full-text ranking, null when it did not rank there. */
  lexicalRank: number | null;
  /** 1-based rank in the embedding ranking, null when it did not rank there. */
  vectorRank: number | null;
  /** Reciprocal rank fusion of the two. */
  fused: number;
}

/** Recall's candidates, best first; the builder keeps those its history does not hold. */
export interface RecalledPassages {
  candidates: RecalledPassage[];
  error?: string;
}

/** What the report says of recall: the passages sent, in prompt order, and their budget. */
export interface PassageReport {
  used: Omit<RecalledPassage, 'text'>[];
  /** Candidates left out because the history already holds them. */
  inHistory: number;
  /** Tokens the passages may take (their share of the history's budget) and took. */
  budget: number;
  tokens: number;
  error?: string;
}

/** Everything the context needs from the adventure at its head, except the story window. */
export interface ContextHead {
  settings: ContextSettings;
  persona: Persona | null;
  /**
   * In a room (docs/multiplayer.md §3.2): the active players' characters, in join order; the
   * player section lists them, and tells the narrator to act and speak for none of them, in
   * place of the persona. Absent, null or empty: one player, and the persona section as before.
   */
  players?: Persona[] | null;
  plotEssentials: string;
  authorsNote: string;
  aiInstructions: string;
  canon: Canon | null;
  storyCards: StoryCard[];
  storySummary: string;
  /**
   * The chapters past the summary, in story order (the chaptered summary): the newest that fit
   * the summary's share of the budget follow it in the prompt. Absent: none.
   */
  storyChapters?: StoryChapter[];
  narrativeState: NarrativeState | null;
  /** The scripts' `state.memory`; only string `context`, `authorsNote`, `frontMemory` count. */
  scriptMemory: Record<string, unknown> | null;
  /**
   * Story actions on the path, the excluded (retried) action not counted. Reported as
   * `history.total`: the whole story, not the window that was read.
   */
  totalActions: number;
  /**
   * The sum of `tokens + separator tokens` over those story actions: where the window's actions
   * lie from the story's start, which `stable` history needs to find its block starts. Without
   * it, `stable` history slides (it cannot place the blocks).
   */
  storyTokens?: number;
  /** null when the memory bank is off. */
  memories: RetrievedMemories | null;
  /** Recall's candidates; absent or null when the memory bank is off. */
  passages?: RecalledPassages | null;
  /** The take being retried: absent from history, card triggers and the rejection lookup. */
  excludeActionId?: string | null;
  /**
   * Seeds the lore's random macros (`{{random:…}}`, `{{roll:…}}`): the turn's id, which the log
   * records, so a rebuild of the turn renders the same prompt. Absent: a fixed seed.
   */
  loreSeed?: string;
  /**
   * The cards whose timed effects (sticky, cooldown) started on earlier turns of the path, as the
   * narrations recorded them (`ContextReport.timedLore`). Absent: none holds.
   */
  timedLore?: TimedLoreFiring[];
}

export interface ContextInput extends ContextHead {
  /** The newest story actions, newest last, covering the budget (see `windowCovering`). */
  window: WindowAction[];
}

export interface ContextBudget {
  reserved: number;
  available: number;
}

export interface ReportSection {
  label: string;
  text: string;
  tokens: number;
}

export interface CardRecord {
  id: string;
  name: string;
  keyword: string;
  included: boolean;
  /**
   * How a card fired when it was not by a key in the story: `always` (always-on) or `recursion`
   * (a key in another fired card's entry, at recursion `step`). Absent on key matches, so the
   * seed's reports stay byte-identical.
   */
  reason?: 'always' | 'recursion' | 'sticky';
  step?: number;
  /** Where it went when it is not the live lore block. */
  placement?: 'static' | 'depth' | 'authorsNote';
  /** Its entry was cut to fit its budget (CardBudget.trim). */
  trimmed?: boolean;
}

/** A card that did not fire although a key of it appeared, and why (the report's `cardsNotFired`). */
export interface CardMiss {
  id: string;
  name: string;
  /**
   * `condition` (secondary keys), `window` (outside its scan window), `regex` (a refused key),
   * `probability` (its draw failed), `group` (another member of its inclusion group won),
   * `delay` (the story is too short yet), `cooldown` (it fired too recently).
   */
  reason: 'condition' | 'window' | 'regex' | 'probability' | 'group' | 'delay' | 'cooldown';
  detail?: string;
}

/** The seed's context report, field for field (hence the snake_case keys). */
export interface ContextReport {
  sections: ReportSection[];
  prompt: { system: string; story: string };
  /**
   * `total` is the sum of the sections' counts plus the separators between them (each costed
   * for the text it follows), not an encode of the joined prompt: the parts' counts are cached,
   * and a test bounds the difference.
   */
  tokens: { total: number; budget: number };
  cards: CardRecord[];
  /** Only when a card came near firing and did not (see CardMiss); absent otherwise. */
  cardsNotFired?: CardMiss[];
  /**
   * The cards whose sticky or cooldown starts on this turn (fired by their keys or always-on and
   * sent): the narration records it, and later turns on its path read it back as
   * `ContextHead.timedLore`. Absent when none.
   */
  timedLore?: string[];
  memories: RetrievedMemories | null;
  /** Only when the head carried recall's candidates (the memory bank is on). */
  passages?: PassageReport;
  history: { included: number; total: number; oldest_truncated: boolean };
  cache: CacheReport;
  settings: {
    model: string;
    api_mode: 'chat' | 'completion';
    temperature: number;
    max_output_tokens: number;
  };
}

/**
 * What the provider's prefix cache can be expected to serve. Chronicle's own figures, beside the
 * seed's report (not a seed field).
 */
export interface CacheReport {
  historyMode: HistoryMode;
  /** Tokens per history block (`stable`); 0 when sliding. */
  blockTokens: number;
  /** Whether the window started at a block start (`stable` and a block fitted). */
  blockAligned: boolean;
  /** History tokens (with separators) over the tokens the history could use. */
  historyFill: number;
  /** The prefix of this prompt the next turn's prompt repeats, if the story only grows. */
  stablePrefixTokens: number;
  /** What OpenAI's rule serves of that prefix, and its share of this prompt's tokens. */
  expectedCachedTokens: number;
  expectedCachedShare: number;
  /**
   * Character offset in the story text of the newest block start inside the history (where an
   * explicit cache breakpoint goes), or null when the history has none.
   */
  breakpoint: number | null;
}

/**
 * A stretch of `story` that a chat prompt sends as its own message of `role` (a depth-placed
 * card's entry): characters `start` to `end`. The rest of the story is the user's message(s).
 */
export interface StoryRole {
  start: number;
  end: number;
  role: 'system' | 'user' | 'assistant';
}

export interface BuiltContext {
  system: string;
  story: string;
  report: ContextReport;
  /** Chat mode, when depth-placed cards are in the story: where their messages are. */
  storyRoles?: StoryRole[];
}
