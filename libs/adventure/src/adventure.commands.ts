// What a player, the API or a worker asks of an adventure. Ids are chosen by the caller (the
// client's action id is the idempotency key), so `decide` stays a pure function.
//
// Every command may carry `key`, its idempotency key (a uuid): the command handler derives the
// ids of the events it decides from it, so the same command sent twice appends once. A command
// without one is not idempotent: the handler draws a fresh key.

import type { Canon } from '@chronicle/narrative';
import type {
  AdventureSettings,
  InputType,
  Narrator,
  ImportMode,
  Lorebook,
  Persona,
  StoryCard,
  TokenEncoding,
  Usage,
} from './adventure.events';
import type { ModelCallPurpose, ModelCallUsage } from './model-call';
import type { NarrationFailureCode } from './narration-failure';
import type { NarrativeCorrection } from './narrative.port';
import type { ScriptCommand, ScriptEffects, ScriptedInput, ScriptInput } from './script.decider';
import type { RoomCommand } from './room.decider';
import type { RoundCommand } from './round.decider';

/** A story card as a command gives it: the descriptive fields and the new ones may be left out. */
export type StoryCardInput = Pick<StoryCard, 'id' | 'name' | 'keys' | 'entry'> &
  Partial<Omit<StoryCard, 'id' | 'name' | 'keys' | 'entry'>>;

/** A card edit: a field set to null goes back to its default (an optional field is removed). */
export type StoryCardChanges = {
  [K in keyof Omit<StoryCard, 'id' | 'origin'>]?: StoryCard[K] | null;
};

/** A persona as a command gives it: any field may be left out, and is then empty. */
export type PersonaInput = Partial<Persona>;

export interface AdventureChanges {
  title?: string;
  plotEssentials?: string;
  authorsNote?: string;
  aiInstructions?: string;
  persona?: PersonaInput;
  canon?: Canon;
  settings?: Partial<AdventureSettings>;
}

export type CreateAdventure = {
  type: 'CreateAdventure';
  data: {
    adventureId: string;
    ownerId: string;
    openingActionId: string;
    title: string;
    /** May hold `${Name}` placeholders, answered by `placeholders`. */
    opening: string;
    placeholders?: Record<string, string>;
    plotEssentials?: string;
    authorsNote?: string;
    aiInstructions?: string;
    persona?: PersonaInput;
    storyCards?: StoryCardInput[];
    canon?: Canon;
    settings?: Partial<AdventureSettings>;
    /** The scenario's scripts, in run order (docs/scripting.md §0). */
    scripts?: ScriptInput[];
  };
};
export type EditAdventure = { type: 'EditAdventure'; data: AdventureChanges };
export type AddStoryCard = { type: 'AddStoryCard'; data: { card: StoryCardInput } };
export type EditStoryCard = {
  type: 'EditStoryCard';
  data: { cardId: string; changes: StoryCardChanges };
};
export type ImportStoryCards = {
  type: 'ImportStoryCards';
  /** Cards carry their `origin`; ids are the caller's, fresh for every card. */
  data: { book: Lorebook; mode: ImportMode; cards: StoryCardInput[]; skipped: number };
};
export type RemoveStoryCard = { type: 'RemoveStoryCard'; data: { cardId: string } };
export type SubmitAction = {
  type: 'SubmitAction';
  data: {
    turnId: string;
    inputType: InputType;
    /** As the player typed it; formatted here. Ignored for continue. */
    text: string;
    /** Ignored for continue, which writes no player action. */
    actionId: string;
    /** What the adventure's onInput scripts made of the text (the API runs them first). */
    script?: ScriptedInput;
    /** The member who sent it; in a room, the turn policy decides what it does (round.decider.ts). */
    actorId?: string;
  };
};
export type RequestRetry = { type: 'RequestRetry'; data: { turnId: string } };
export type RecordNarration = {
  type: 'RecordNarration';
  data: {
    turnId: string;
    actionId: string;
    /** What the story records: the reply's prose, or the text onOutput made of it. */
    text: string;
    /**
     * What the model proposed: its whole reply, state block and all. The decider parses the
     * block and referees it against the state the narration is appended to; Narrated records
     * the verdict, so a replay never judges again.
     */
    reply: string;
    reasoning?: string | null;
    usage: Usage;
    model: string;
    narrator: Narrator;
    finishReason: string;
    contextManifest: Record<string, unknown>;
    latencyMs: number;
    /** onModelContext's and onOutput's effects, committed with the narration (docs/scripting.md §3.1). */
    scripts?: { context?: ScriptEffects; output?: ScriptEffects };
    /**
     * The memories the prompt retrieved: their use counts move in the same append as the
     * narration, so a preview, a failed or cancelled turn never counts, and a redelivered job
     * cannot count twice.
     */
    memoriesUsed?: string[];
    /** What embedding the retrieval query cost: paid for with the turn, in the same append. */
    retrievalUsage?: ModelCallUsage | null;
  };
};
/** onModelContext stopped the turn in flight: no model call; the player action stays. */
export type StopTurnByScript = {
  type: 'StopTurnByScript';
  data: { turnId: string; scriptId: string; message: string; effects: ScriptEffects };
};
export type RecordNarrationFailure = {
  type: 'RecordNarrationFailure';
  /** `code` defaults to the one the message's words stand for (`internal` when none fits). */
  data: { turnId: string; error: string; attempts: number; code?: NarrationFailureCode };
};
/** A model call no other event records (an embedding batch, a reply that could not be used). */
export type RecordModelUsage = {
  type: 'RecordModelUsage';
  data: { purpose: ModelCallPurpose; usage: ModelCallUsage; turnId?: string };
};
export type CancelTurn = { type: 'CancelTurn'; data: { turnId: string } };
export type Undo = { type: 'Undo'; data: Record<string, never> };
export type Redo = { type: 'Redo'; data: Record<string, never> };
/** Select a take, switch branch, or stand anywhere in the tree: the next action goes below it. */
export type MoveHead = { type: 'MoveHead'; data: { actionId: string } };
export type EditAction = { type: 'EditAction'; data: { actionId: string; text: string } };
export type EraseAction = { type: 'EraseAction'; data: { actionId: string } };
export type CorrectNarrativeState = {
  type: 'CorrectNarrativeState';
  /** Anchored on the head unless another action on the path is named. */
  data: { correction: NarrativeCorrection; anchorActionId?: string };
};
/** Several corrections in order, in one append: all of them or none. */
export type ApplyCorrections = {
  type: 'ApplyCorrections';
  data: { corrections: NarrativeCorrection[]; anchorActionId?: string };
};
export type RetconStateEvent = {
  type: 'RetconStateEvent';
  /** `index` into the AI action's accepted events. */
  data: { actionId: string; index: number };
};

export type AdventureCommand =
  | CreateAdventure
  | EditAdventure
  | AddStoryCard
  | EditStoryCard
  | RemoveStoryCard
  | ImportStoryCards
  | SubmitAction
  | RequestRetry
  | RecordNarration
  | RecordNarrationFailure
  | StopTurnByScript
  | ScriptCommand
  | RoomCommand
  | RecordModelUsage
  | CancelTurn
  | Undo
  | Redo
  | MoveHead
  | EditAction
  | EraseAction
  | CorrectNarrativeState
  | ApplyCorrections
  | RetconStateEvent
  | RoundCommand;

/** Any command, with the idempotency key its events' ids derive from (see the top of the file). */
export type Keyed<Command> = Command & { key?: string };

/**
 * What `decide` needs besides the command and the state. Token counts are cached on every
 * action, so the decider counts the text it writes, in the adventure's encoding; the caller
 * passes libs/context's tokenizer: `(text, encoding) => tokenizer(encoding).count(text)`.
 */
export interface DecideContext {
  countTokens(text: string, encoding: TokenEncoding): number;
}
