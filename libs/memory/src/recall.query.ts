// What a turn's recall searches with: the player's new action and the entities it names, with
// the scene (the newest story) as a weaker pull. Searching with the newest few actions (the seed's
// query) made every question asked at one point in the story fetch the same memories: the action
// is what differs from turn to turn, so it leads.
import { mentionedCards, type StoryCard, type TokenEncoding } from '@chronicle/context';
import { retrievalQuery } from './memory.plan';

/**
 * The scene's weight beside the action's in the query vector (both unit length first). Below
 * one half, a scene that shares many words with old passages cannot outvote the action.
 */
export const SCENE_WEIGHT = 0.35;
/** At most this many card names join the action's words (a long action names few cards). */
export const MAX_QUERY_ENTITIES = 8;

export interface RecallQueryInput {
  /** What the player just wrote (their action or the opening); '' for a continue or a retry. */
  actionText: string;
  /** The newest story texts, newest last (a retried take left out). */
  scene: readonly string[];
  cards: readonly StoryCard[];
  encoding?: TokenEncoding;
}

export interface RecallQuery {
  /** The action with the names of the cards it mentions: the strong signal, searched by words too. */
  focus: string;
  /** The scene as the seed's query read it (retrievalQuery): the weak signal, by meaning only. */
  scene: string;
}

/**
 * The action and the names of the story cards it mentions (by the lore's own matching rule, so
 * "the smith" finds the card keyed "smith" and adds its name). With no action (continue, retry)
 * the scene is the focus, as the seed's query was.
 */
export function recallQuery(input: RecallQueryInput): RecallQuery {
  const scene = retrievalQuery(input.scene, input.encoding);
  const action = input.actionText.trim();
  if (action === '') return { focus: scene, scene: '' };
  const lower = action.toLowerCase();
  const names: string[] = [];
  for (const match of mentionedCards(input.cards, action)) {
    const name = match.name.trim();
    if (name === '' || lower.includes(name.toLowerCase()) || names.includes(name)) continue;
    names.push(name);
    if (names.length === MAX_QUERY_ENTITIES) break;
  }
  return { focus: names.length > 0 ? `${action}\n${names.join(', ')}` : action, scene };
}

/**
 * One query vector from the focus's and the scene's embeddings: each made unit length, the
 * scene's scaled by SCENE_WEIGHT. A missing or zero scene leaves the focus alone.
 */
export function blendQueryVectors(
  focus: ArrayLike<number>,
  scene: ArrayLike<number> | null,
): Float32Array {
  const out = new Float32Array(focus.length);
  const focusNorm = normOf(focus);
  if (focusNorm > 0) for (let i = 0; i < focus.length; i++) out[i] = focus[i] / focusNorm;
  const sceneNorm = scene && scene.length === focus.length ? normOf(scene) : 0;
  if (scene && sceneNorm > 0) {
    const weight = SCENE_WEIGHT / sceneNorm;
    for (let i = 0; i < out.length; i++) out[i] += scene[i] * weight;
  }
  return out;
}

function normOf(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  return Math.sqrt(sum);
}
