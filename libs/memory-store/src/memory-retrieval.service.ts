// The context worker's retrieval: the memories a turn's prompt carries. Never fails a turn: a
// failed query embedding is reported as the result's error, with the pinned memories still used.
import {
  activeMemories,
  storyTail,
  type AdventureState,
  type ModelCallUsage,
} from '@chronicle/adventure';
import {
  contextCardsOf,
  playerTextOfTurn,
  type ActionTextReader,
  type AdventureCommandHandler,
} from '@chronicle/adventure-store';
import type { Embedder } from '@chronicle/llm';
import {
  RETRIEVAL_WINDOW_ACTIONS,
  blendQueryVectors,
  rankByMatrix,
  recallQuery,
  type RankedMemory,
  type RecallQuery,
} from '@chronicle/memory';
import { textHash } from './embedding.repository';
import type { VectorCache } from './vector.cache';

export interface RetrievalResult {
  /** Each with the story actions it was written from (see `UsedMemory.sources`). */
  used: (RankedMemory & { sources: string[] })[];
  error?: string;
  /** What the query's embedding cost; the turn records it beside its narration. */
  usage?: ModelCallUsage;
}

export class MemoryRetrievalService {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly embedder: Embedder,
    private readonly cache: VectorCache,
  ) {}

  /**
   * What the turn's recall searches with (see libs/memory's recallQuery): the player's text of
   * the turn in flight, with the cards it names, and the newest story as the scene. `texts`
   * reads the story: a dry run's reader (hypotheticalTurn) also knows the action it supposes,
   * which no event holds.
   */
  async query(
    state: AdventureState,
    texts: ActionTextReader = this.adventures,
  ): Promise<RecallQuery> {
    const adventureId = state.id ?? '';
    // storyTail leaves a retried take out, as every read during generation must.
    const tail = storyTail(state, RETRIEVAL_WINDOW_ACTIONS);
    const [scene, played] = await Promise.all([
      texts.readActionTexts(adventureId, tail),
      playerTextOfTurn(texts, state),
    ]);
    return recallQuery({
      actionText: played,
      scene,
      cards: contextCardsOf(state.cards),
      encoding: state.settings.encoding,
    });
  }

  /** The query's vector: the focus's embedding with the scene's, weaker, blended in. */
  async embedQuery(query: RecallQuery): Promise<{ vector: Float32Array; usage: ModelCallUsage }> {
    const texts = query.scene === '' ? [query.focus] : [query.focus, query.scene];
    const embedded = await this.embedder.embed(texts);
    return {
      vector: blendQueryVectors(embedded.vectors[0], embedded.vectors[1] ?? null),
      usage: { model: embedded.model, ...embedded.usage },
    };
  }

  /** null when the bank is off. `texts` as for `query`. */
  async retrieve(
    state: AdventureState,
    texts: ActionTextReader = this.adventures,
  ): Promise<RetrievalResult | null> {
    if (!state.settings.memoryBankEnabled || state.id === null) return null;
    const candidates = activeMemories(state);
    if (candidates.length === 0) return { used: [] };
    const sourcesOf = new Map(candidates.map((memory) => [memory.id, memory.sourceActionIds]));
    const cited = (used: RankedMemory[]) =>
      used.map((memory) => ({ ...memory, sources: sourcesOf.get(memory.id) ?? [] }));
    const adventureId = state.id;
    const hashes = candidates.map((memory) => textHash(memory.text));
    const { matrix, rowOf } = await this.cache.matrix(adventureId, this.embedder.model, hashes);
    const ranked = candidates.map((memory, index) => ({
      id: memory.id,
      text: memory.text,
      pinned: memory.pinned,
      row: rowOf.get(hashes[index]) ?? null,
    }));
    const topK = state.settings.memoryTopK;
    try {
      const { vector, usage } = await this.embedQuery(await this.query(state, texts));
      return { used: cited(rankByMatrix(ranked, matrix, vector, topK)), usage };
    } catch (error) {
      const pinned = ranked.filter((memory) => memory.pinned);
      return {
        used: cited(rankByMatrix(pinned, matrix, new Float32Array(0), topK)),
        error: `memory retrieval failed: ${(error as Error).message}`,
      };
    }
  }
}
