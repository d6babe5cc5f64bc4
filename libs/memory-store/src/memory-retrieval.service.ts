// The context worker's retrieval: the memories a turn's prompt carries. Never fails a turn: a
// failed query embedding is reported as the result's error, with the pinned memories still used.
import {
  activeMemories,
  storyTail,
  type AdventureState,
  type ModelCallUsage,
} from '@chronicle/adventure';
import type { AdventureCommandHandler } from '@chronicle/adventure-store';
import type { Embedder } from '@chronicle/llm';
import {
  RETRIEVAL_WINDOW_ACTIONS,
  rankByMatrix,
  retrievalQuery,
  type RankedMemory,
} from '@chronicle/memory';
import { textHash } from './embedding.repository';
import type { VectorCache } from './vector.cache';

export interface RetrievalResult {
  used: RankedMemory[];
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

  /** null when the bank is off. */
  async retrieve(state: AdventureState): Promise<RetrievalResult | null> {
    if (!state.settings.memoryBankEnabled || state.id === null) return null;
    const candidates = activeMemories(state);
    if (candidates.length === 0) return { used: [] };
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
      // storyTail leaves a retried take out, as every read during generation must.
      const tail = storyTail(state, RETRIEVAL_WINDOW_ACTIONS);
      const texts = await this.adventures.readActionTexts(adventureId, tail);
      const query = retrievalQuery(texts, state.settings.encoding);
      const embedded = await this.embedder.embed([query]);
      return {
        used: rankByMatrix(ranked, matrix, Float32Array.from(embedded.vectors[0]), topK),
        usage: { model: embedded.model, ...embedded.usage },
      };
    } catch (error) {
      const pinned = ranked.filter((memory) => memory.pinned);
      return {
        used: rankByMatrix(pinned, matrix, new Float32Array(0), topK),
        error: `memory retrieval failed: ${(error as Error).message}`,
      };
    }
  }
}
