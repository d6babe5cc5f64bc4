// Reads over the projection. Every read of the story skips erased actions and, by default, the
// take a retry in flight is replacing: the retried take must not reach history, card triggers,
// the refusal lookup or the retrieval query of the turn that replaces it.

import type { NarrativeState, Rejection } from '@chronicle/narrative';
import type { AdventureEvent } from './adventure.events';
import { failureCodeOfMessage, type NarrationFailureCode } from './narration-failure';
import {
  allNodes,
  nodeOf,
  type AdventureState,
  type PathEntry,
  type TurnOutcome,
} from './adventure.state';

export interface StoryReadOptions {
  /** Keep the take a retry in flight is replacing (default false: it is excluded). */
  includeReplaced?: boolean;
}

/** The id a story read leaves out while a retry is in flight, or null. */
export function excludedActionId(state: Pick<AdventureState, 'inFlight'>): string | null {
  return state.inFlight?.replacesActionId ?? null;
}

/** Whether a read of the story holds this entry of the path: not erased, not the `excluded` take. */
export function isStoryEntry(entry: PathEntry, excluded: string | null): boolean {
  return !entry.erased && entry.id !== excluded;
}

/** The story at the head, root first: erased actions and (by default) the retried take left out. */
export function storyPath(state: AdventureState, options: StoryReadOptions = {}): PathEntry[] {
  const excluded = options.includeReplaced ? null : excludedActionId(state);
  return state.path.filter((entry) => isStoryEntry(entry, excluded));
}

/** How many actions (the opening included) the story at the head holds. */
export function storyActionCount(state: AdventureState, options: StoryReadOptions = {}): number {
  const excluded = options.includeReplaced ? null : excludedActionId(state);
  let count = 0;
  for (const entry of state.path) if (isStoryEntry(entry, excluded)) count++;
  return count;
}

/**
 * The newest story actions, newest last: the tail of `storyPath` without copying the whole
 * path (a turn reads a window, not a 5,000-action story).
 */
export function storyTail(
  state: Pick<AdventureState, 'path' | 'inFlight'>,
  count: number,
  options: StoryReadOptions = {},
): PathEntry[] {
  const excluded = options.includeReplaced ? null : excludedActionId(state);
  const tail: PathEntry[] = [];
  for (let index = state.path.length - 1; index >= 0 && tail.length < count; index--) {
    const entry = state.path[index];
    if (isStoryEntry(entry, excluded)) tail.push(entry);
  }
  return tail.reverse();
}

/** How many player actions back the player's text of a turn reaches at most. */
const PLAYER_ACTIONS_OF_A_TURN = 4;

/**
 * What the player wrote for the turn in flight: their actions (or the opening) since the last
 * narration in the story, at most four, oldest first (none for a continue right after a
 * narration). The referee refuses an event their texts carried (`inFlight.playerEvents`), and
 * the turn's recall searches with their texts.
 */
export function playerActionsOfTurn(state: Pick<AdventureState, 'path' | 'inFlight'>): PathEntry[] {
  // A room's turn answers every action of its round, however many.
  const reach = Math.max(PLAYER_ACTIONS_OF_A_TURN, state.inFlight?.actionIds.length ?? 0);
  const tail = storyTail(state, reach);
  let start = tail.length;
  while (start > 0 && tail[start - 1].type !== 'ai') start--;
  return tail.slice(start);
}

/** The window the refusal lookup searches, in story actions. */
export const REJECTION_WINDOW = 6;

/**
 * The rejections of the newest AI action among the newest `window` story actions: the note the
 * next prompt carries. Feedback covers the previous AI turn only, so an older AI turn's
 * refusals never come back.
 */
export function lastAiRejections(state: AdventureState, window = REJECTION_WINDOW): Rejection[] {
  const tail = storyTail(state, window);
  for (let index = tail.length - 1; index >= 0; index--) {
    if (tail[index].type === 'ai') return nodeOf(state, tail[index].id)?.rejected ?? [];
  }
  return [];
}

/**
 * The narrative state the next narration starts from: at the head, or, while a retry is in
 * flight, at the parent of the take being replaced (the old take's events do not count).
 */
export function narrativeForTurn(state: AdventureState): NarrativeState {
  // RetryRequested makes sure the parent's state is known for the whole retry.
  return state.inFlight?.kind === 'retry' && state.narrativeAtParent
    ? state.narrativeAtParent
    : state.narrative;
}

export type TurnStatus =
  | { status: 'queued'; actionId: string | null }
  | { status: 'done'; actionId: string }
  | { status: 'failed'; error: string; code: NarrationFailureCode }
  | { status: 'cancelled' }
  | { status: 'stopped'; message: string };

/**
 * A turn's status from the projection, or null when the projection no longer knows it (only
 * the newest RECENT_TURNS_KEPT outcomes are kept; an older turn is read from the log). Whether a
 * worker has started a queued turn is not a fact of the log: the caller may refine `queued`.
 */
export function turnStatus(state: AdventureState, turnId: string): TurnStatus | null {
  if (state.inFlight?.turnId === turnId) {
    return { status: 'queued', actionId: state.inFlight.actionId };
  }
  const outcome = findOutcome(state, turnId);
  if (!outcome) return null;
  switch (outcome.status) {
    case 'done':
      return { status: 'done', actionId: outcome.actionId ?? '' };
    case 'failed':
      return {
        status: 'failed',
        error: outcome.error ?? '',
        code: outcome.code ?? failureCodeOfMessage(outcome.error ?? ''),
      };
    case 'cancelled':
      return { status: 'cancelled' };
    case 'stopped':
      return { status: 'stopped', message: outcome.error ?? '' };
  }
}

function findOutcome(state: AdventureState, turnId: string): TurnOutcome | undefined {
  for (let index = state.recentTurns.length - 1; index >= 0; index--) {
    if (state.recentTurns[index].turnId === turnId) return state.recentTurns[index];
  }
  return undefined;
}

/**
 * The text of `actionId` as the event at its `textVersion` holds it, or null when that event
 * does not carry this action's text. History readers load events by version and call this.
 */
export function actionTextFromEvent(event: AdventureEvent, actionId: string): string | null {
  if (event.type === 'PlayersActed') {
    return event.data.actions.find((action) => action.id === actionId)?.text ?? null;
  }
  const held = actionTextOfEvent(event);
  return held?.id === actionId ? held.text : null;
}

/**
 * The action texts an event writes into the story, with each action's id: one, none, or a
 * turn of several players' actions (`PlayersActed`).
 */
export function actionTextsOfEvent(event: AdventureEvent): { id: string; text: string }[] {
  if (event.type === 'PlayersActed') {
    return event.data.actions.map((action) => ({ id: action.id, text: action.text }));
  }
  const held = actionTextOfEvent(event);
  return held ? [held] : [];
}

/**
 * The action text an event holds when it holds one, with the action's id (a PlayersActed holds
 * several: read it with `actionTextsOfEvent`).
 */
export function actionTextOfEvent(event: AdventureEvent): { id: string; text: string } | null {
  switch (event.type) {
    case 'AdventureCreated':
      return { id: event.data.openingAction.id, text: event.data.opening };
    case 'PlayerActed':
      return event.data.action ? { id: event.data.action.id, text: event.data.action.text } : null;
    case 'Narrated':
      return { id: event.data.action.id, text: event.data.action.text };
    case 'ActionEdited':
      return { id: event.data.actionId, text: event.data.text };
    default:
      return null;
  }
}

/**
 * JSON with object keys sorted at every level. jsonb does not keep key order, so a projection
 * read back from a snapshot and one folded live are compared in this form.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
    }
    return sorted;
  }
  return value;
}

/**
 * The takes of an AI action: it and its non-erased AI siblings (every narration of the same
 * player action, one per retry), oldest first by the version of their text (so an edited take
 * moves to the end). A scan of the whole tree: called once per read of an adventure, for the
 * newest narration only.
 */
export function takesOf(state: AdventureState, actionId: string): string[] {
  const node = nodeOf(state, actionId);
  if (!node || node.type !== 'ai') return [];
  const takes = [];
  for (const other of allNodes(state)) {
    if (other.type === 'ai' && !other.erased && other.parentId === node.parentId) takes.push(other);
  }
  return takes.sort((a, b) => a.textVersion - b.textVersion).map((take) => take.id);
}

/** The newest AI action on the story at the head, or null before the first narration. */
export function lastNarrationOf(state: AdventureState): PathEntry | null {
  const tail = storyTail(state, REJECTION_WINDOW);
  for (let index = tail.length - 1; index >= 0; index--) {
    if (tail[index].type === 'ai') return tail[index];
  }
  return null;
}
