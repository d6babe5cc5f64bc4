// max-lines: the adventure stream's own event types and the union of every stream event, read
// together; the room's, rounds', scripts' and memories' events already live in their own files.
// The facts of one adventure, in the order they happened, on one stream per adventure. Model
// output is a fact too: a narration, its refereed state events, usage and the context manifest
// are stored here, so a replay never calls a model.

import type { Canon, Rejection, StateEvent } from '@chronicle/narrative';
import type { NarrativeCorrection } from './narrative.port';
import type { MemoryEvent } from './memory.events';
import type { ModelCallPurpose, ModelCallUsage } from './model-call';
import type { RoundEvent } from './round.events';
import type { ScriptEvent, ScriptSource } from './script.events';
import type { NarrationFailureCode } from './narration-failure';
import type { RoomEvent } from './room.events';

export const ADVENTURE_STREAM_PREFIX = 'adventure-';

export function adventureStreamId(adventureId: string): string {
  return `${ADVENTURE_STREAM_PREFIX}${adventureId}`;
}

/** The adventure id a stream id names, or null when it is not an adventure stream. */
export function adventureIdOfStream(streamId: string): string | null {
  return streamId.startsWith(ADVENTURE_STREAM_PREFIX)
    ? streamId.slice(ADVENTURE_STREAM_PREFIX.length)
    : null;
}

export type TokenEncoding = 'cl100k_base' | 'o200k_base';
/** How the history window moves (see libs/context's prompt cache): the same values as there. */
export type HistoryMode = 'stable' | 'sliding';
export type ApiMode = 'chat' | 'completion';
/**
 * What a Context script may do to the prompt (spec/scripting.md §3.2): `full` applies an append
 * or a rewrite; `append-only` (AI Dungeon's Optimized Context) keeps the cached prefix, so a
 * rewrite is discarded and an append needs `// @cache-compatible` at the top of the hook.
 */
export type ContextHookMode = 'full' | 'append-only';

export interface AdventureSettings {
  model: string;
  apiMode: ApiMode;
  temperature: number;
  maxOutputTokens: number;
  contextTokenBudget: number;
  /** 0 = not sent, -1 = reasoning off, a positive value is added on top of the output cap. */
  reasoningMaxTokens: number;
  encoding: TokenEncoding;
  /**
   * How the prompt's history window moves (libs/context): `stable` (the default since v2 of
   * AdventureCreated) moves its start by whole blocks so the provider's prefix cache keeps
   * serving it; `sliding` is the seed's window. Adventures created before it was a setting were
   * narrated with `sliding` and upcast to it, so their prompts replay byte for byte.
   */
  historyMode: HistoryMode;
  autoSummarize: boolean;
  memoryBankEnabled: boolean;
  memoryTopK: number;
  memoryCapacity: number;
  contextHookMode: ContextHookMode;
  /**
   * This adventure's script limits (spec §3.5: per adventure, capped by the operator's
   * SCRIPT_HOOK_TIMEOUT_MS, SCRIPT_TURN_BUDGET_MS and SCRIPT_MEMORY_LIMIT_MB at run time).
   */
  scriptHookTimeoutMs: number;
  scriptTurnBudgetMs: number;
  scriptMemoryLimitMb: number;
  /**
   * How a room's players take turns (spec/multiplayer.md §3.3): `free` (default: anyone acts; an
   * action sent while a turn is in flight is held for the next), `round`, `hot-seat`. A
   * one-player adventure plays the same under each.
   */
  turnPolicy: TurnPolicy;
  /** A player silent this long in a round or on the hot seat is marked away (default 300). */
  idleTimeoutSeconds: number;
  /** A round closes by itself after this long; 0 (default): only when everyone is in, or the host closes it. */
  roundTimeoutSeconds: number;
  /** Each non-host member's daily model tokens charged to the host; 0 (default): no cap of its own. */
  perPlayerDailyTokens: number;
}

export type TurnPolicy = 'free' | 'round' | 'hot-seat';

/** The player character, exactly as the prompt renders it (libs/context owns the shape). */
/** Who the player is in the story; each field may be empty. */
export interface Persona {
  name: string;
  pronouns: string;
  description: string;
}

/** The lore formats Chronicle reads and writes (libs/lore). */
export type LoreFormat =
  | 'aid'
  | 'sillytavern'
  | 'ccv2'
  | 'ccv3'
  | 'novelai'
  | 'kobold'
  /** Read only: Agnai memory books and Risu lorebooks (their cards export to the others). */
  | 'agnai'
  | 'risu';

/**
 * Where an imported card came from: the source entry verbatim (`raw`), so an export to the same
 * format gives it back field for field, features Chronicle does not run included.
 */
export interface CardOrigin {
  format: LoreFormat;
  /** The lorebook (see Lorebook) the card arrived in. */
  bookId: string;
  raw: Record<string, unknown>;
}

// A card's lore fields, as the adventure stores them. What the lore matcher does with each is
// libs/context's (its StoryCard, context.types.ts, documents every field); the prompt seam maps
// one to the other in one function (`contextCardOf`, libs/adventure-store/src/turn-context.ts),
// so a new lore field is added here, there, and in the card checks (CARD_FIELDS).

/** How `keys` splits into keys: `plain` (commas), `aid` (AI Dungeon's), `lines` (one a line). */
export type CardKeySyntax = 'plain' | 'aid' | 'lines';
/** `keys`: fires on its keys; `always`: every turn; `inert`: never sent (config cards, scripts). */
export type CardActivation = 'keys' | 'always' | 'inert';
export type CardConditionMode = 'anyOf' | 'allOf' | 'noneOf' | 'notAllOf';
/** A secondary-key condition that must hold, besides a primary key, for the card to fire. */
export interface CardCondition {
  mode: CardConditionMode;
  keys: string[];
}
/** Where a fired card's entry goes: the lore block, or into the history `depth` actions back. */
export interface CardPlacement {
  kind: 'lore' | 'depth' | 'authorsNote';
  depth?: number;
  role?: 'system' | 'user' | 'assistant';
  /** `authorsNote` placement: before (`top`) or after (`bottom`) the author's note. */
  edge?: 'top' | 'bottom';
}
/** A card's own share of the lore budget and how it may be cut to fit (NovelAI's). */
export interface CardBudget {
  maxTokens?: number;
  reservedTokens?: number;
  trim?: 'none' | 'end' | 'start';
  trimUnit?: 'newline' | 'sentence' | 'token';
}
/** Timed effects, in story actions on the current path (SillyTavern's delay, sticky, cooldown). */
export interface CardTiming {
  delay?: number;
  sticky?: number;
  cooldown?: number;
}
/** The part of the trigger window a card reads: its last `actions` actions or `chars` characters. */
export interface CardScan {
  actions?: number;
  chars?: number;
}
/** Whether a fired card's entry fires others, may be fired by them, and from which step. */
export interface CardRecursion {
  feedsOthers: boolean;
  triggeredByOthers: boolean;
  delayLevel?: number;
}
/** Inclusion groups: of the fired cards sharing a group name, one is kept. */
export interface CardGroup {
  names: string[];
  weight?: number;
  override?: boolean;
}

/** A story card as the adventure keeps it: its lore fields, plus the player's notes. */
export interface StoryCard {
  id: string;
  name: string;
  keys: string;
  entry: string;
  type: string;
  // Every field below is optional; absent, the card behaves as the seed's cards did.
  keySyntax?: CardKeySyntax;
  enabled?: boolean;
  activation?: CardActivation;
  priority?: number;
  caseSensitive?: boolean;
  wholeWords?: boolean;
  scan?: CardScan;
  conditions?: CardCondition[];
  placement?: CardPlacement;
  recursion?: CardRecursion;
  /** What `{{char}}` renders as in this card. */
  charName?: string;
  /** Percent chance (0..100) that a card which fired is kept. */
  probability?: number;
  group?: CardGroup;
  /** Timed effects, in story actions on the current path. */
  timing?: CardTiming;
  /** Its own share of the lore budget and how it may be cut to fit. */
  budget?: CardBudget;
  /** Never sent to the model; kept byte-exact (AI Dungeon scripts keep data here). */
  notes: string;
  /** Absent on cards written in Chronicle. */
  origin?: CardOrigin;
}

/** An imported book's own fields (its settings, name, extensions), without its entries. */
export interface Lorebook {
  id: string;
  format: LoreFormat;
  /** `lorebookVersion`, `spec_version` or the like, as the file said. */
  formatVersion: string | null;
  name: string;
  raw: Record<string, unknown>;
}

export type ImportMode = 'merge' | 'replace';

export interface StoryCardsImportedData {
  book: Lorebook;
  mode: ImportMode;
  /** `replace`: every card the adventure held before, removed first. */
  removedCardIds: string[];
  cards: StoryCard[];
  /** Entries of the file not imported (duplicates, empty entries), as the import report counted. */
  skipped: number;
}

/** The adventure-level texts a player edits (the opening is an action node, edited as one). */
export interface AdventureFields {
  title: string;
  plotEssentials: string;
  authorsNote: string;
  aiInstructions: string;
  persona: Persona;
  canon: Canon;
}

export type InputType = 'do' | 'say' | 'story' | 'continue';
export type PlayerActionType = Exclude<InputType, 'continue'>;
export type Narrator = 'offline' | 'remote';
export type HeadMoveReason = 'undo' | 'redo' | 'select';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** The model that answered; Narrated events before it was recorded here name it in data.model. */
  model?: string;
  /**
   * Narrated only, when a Context script rewrote the story block (spec/scripting.md §3.2): the
   * prompt tokens the native prompt would have kept in the provider's prefix cache and the
   * rewrite gave up (the system block's share stays cached).
   */
  scriptCacheLossTokens?: number;
}

export interface ModelUsageRecordedData {
  purpose: ModelCallPurpose;
  usage: ModelCallUsage;
  /** The turn the call served (a turn's query embedding), when it served one. */
  turnId?: string;
}

export interface AdventureCreatedData extends AdventureFields {
  adventureId: string;
  ownerId: string;
  /** The opening with its `${Name}` placeholders already answered. */
  opening: string;
  /** The answers, kept so a later refresh can re-fill templates without asking again. */
  placeholders: Record<string, string>;
  storyCards: StoryCard[];
  settings: AdventureSettings;
  openingAction: { id: string; tokens: number };
}

export interface AdventureEditedData {
  title?: string;
  plotEssentials?: string;
  authorsNote?: string;
  aiInstructions?: string;
  persona?: Persona;
  canon?: Canon;
  /** Only the settings that changed. */
  settings?: Partial<AdventureSettings>;
}

export interface PlayerActedData {
  turnId: string;
  inputType: InputType;
  /** null for `continue`, which writes no player action. */
  action: { id: string; type: PlayerActionType; text: string; tokens: number } | null;
  /** Set when an onInput script changed the text: what the player typed, formatted. */
  typedText?: string;
  /** The room member who acted; absent in a one-player adventure (its events stay as they were). */
  actorId?: string;
}

export interface NarratedData {
  turnId: string;
  /** Prose only: the state block is stripped before it gets here. */
  action: { id: string; text: string; tokens: number };
  /** Set when this narration is a retry's new take. */
  replacesActionId: string | null;
  accepted: StateEvent[];
  rejected: Rejection[];
  reasoning: string | null;
  usage: Usage;
  model: string;
  narrator: Narrator;
  finishReason: string;
  /** The context report's manifest, as the worker built it; opaque to this lib. */
  contextManifest: Record<string, unknown>;
  latencyMs: number;
  /**
   * The text is what an Output hook made of the model's prose. Only then may it be blank: a
   * script returning " " hides the reply on purpose (AI Dungeon's rule, docs/scripting.md §3.6).
   */
  textByScript?: true;
}

export type AdventureCreated = { type: 'AdventureCreated'; data: AdventureCreatedData };
export type AdventureEdited = { type: 'AdventureEdited'; data: AdventureEditedData };
/** `source`: set when a script's hook run made the change (docs/scripting.md §3.3). */
export type StoryCardAdded = {
  type: 'StoryCardAdded';
  data: { card: StoryCard; source?: ScriptSource };
};
/** A field changed to null went back to its default: the projection drops it. */
export type StoryCardEdited = {
  type: 'StoryCardEdited';
  data: {
    cardId: string;
    changes: { [K in keyof Omit<StoryCard, 'id' | 'origin'>]?: StoryCard[K] | null };
    source?: ScriptSource;
  };
};
export type StoryCardRemoved = {
  type: 'StoryCardRemoved';
  data: { cardId: string; source?: ScriptSource };
};
/** One lore file imported: its book and every card, in one event. */
export type StoryCardsImported = { type: 'StoryCardsImported'; data: StoryCardsImportedData };
export type PlayerActed = { type: 'PlayerActed'; data: PlayerActedData };
export type RetryRequested = {
  type: 'RetryRequested';
  data: { turnId: string; replacesActionId: string };
};
export type Narrated = { type: 'Narrated'; data: NarratedData };
/**
 * v1 named the message `error`; v2 calls it `message`, like the turn stream's `error` frame; v3
 * adds the stable `code` a client switches on (see narration-failure.ts).
 */
export type NarrationFailed = {
  type: 'NarrationFailed';
  data: { turnId: string; code: NarrationFailureCode; message: string; attempts: number };
};
export type NarrationCancelled = { type: 'NarrationCancelled'; data: { turnId: string } };
export type HeadMoved = {
  type: 'HeadMoved';
  data: { from: string; to: string; reason: HeadMoveReason };
};
export type ActionEdited = {
  type: 'ActionEdited';
  data: { actionId: string; text: string; tokens: number };
};
export type ActionErased = { type: 'ActionErased'; data: { actionId: string } };
export type NarrativeStateCorrected = {
  type: 'NarrativeStateCorrected';
  data: { anchorActionId: string; correction: NarrativeCorrection };
};
export type StateEventRetconned = {
  type: 'StateEventRetconned';
  data: { actionId: string; index: number };
};
/**
 * A model call paid for that no other event records: embeddings, a regeneration or a memory
 * whose reply was unusable. Changes nothing in the projection; it is there to be summed.
 */
export type ModelUsageRecorded = { type: 'ModelUsageRecorded'; data: ModelUsageRecordedData };

export type AdventureEvent =
  | AdventureCreated
  | AdventureEdited
  | StoryCardAdded
  | StoryCardEdited
  | StoryCardRemoved
  | StoryCardsImported
  | PlayerActed
  | RetryRequested
  | Narrated
  | NarrationFailed
  | NarrationCancelled
  | HeadMoved
  | ActionEdited
  | ActionErased
  | NarrativeStateCorrected
  | StateEventRetconned
  | ModelUsageRecorded
  | MemoryEvent
  | ScriptEvent
  | RoomEvent
  | RoundEvent;

export type AdventureEventType = AdventureEvent['type'];

/** An event as read back from the stream: its version there is the address of its text. */
export type RecordedAdventureEvent = AdventureEvent & { version: number };
