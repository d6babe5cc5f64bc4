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
import type { RecalledPassage, RecalledPassages } from '@chronicle/context';
import { textHash } from './embedding.repository';
import { sumUsage } from './model-usage';
import { TURN_CATCH_UP_LIMIT, type StoryRecallService } from './story-recall.service';
import type { VectorCache } from './vector.cache';

export interface RetrievalResult {
  /** Each with the story actions it was written from (see `UsedMemory.sources`). */
  used: (RankedMemory & { sources: string[] })[];
  error?: string;
  /**
   * What the query's embedding and the passage index's catch-up cost; the turn records it
   * beside its narration.
   */
  usage?: ModelCallUsage;
  /** Recall's candidates (see StoryRecallService.search), with any failure as their error. */
  passages?: RecalledPassages;
}

export class MemoryRetrievalService {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly embedder: Embedder,
    private readonly cache: VectorCache,
    /** Verbatim recall of the story; absent, the result carries no passages. */
    private readonly recall?: StoryRecallService,
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

  /**
   * The memories and the recalled passages a turn's prompt may use; null when the bank is off.
   * `texts` as for `query`. The passage index is caught up first (at most TURN_CATCH_UP_LIMIT
   * passages) from `stored`, the projection of the log (a dry run's `state` holds an action no
   * event does, which is never indexed), beside the query's embedding; what both cost is the
   * result's `usage`, paid for with the turn.
   */
  async retrieve(
    state: AdventureState,
    texts: ActionTextReader = this.adventures,
    stored: AdventureState = state,
  ): Promise<RetrievalResult | null> {
    if (!state.settings.memoryBankEnabled || state.id === null) return null;
    const adventureId = state.id;
    const candidates = activeMemories(state);
    const sourcesOf = new Map(candidates.map((memory) => [memory.id, memory.sourceActionIds]));
    const cited = (used: RankedMemory[]) =>
      used.map((memory) => ({ ...memory, sources: sourcesOf.get(memory.id) ?? [] }));
    const hashes = candidates.map((memory) => textHash(memory.text));
    const catchingUp = this.recall
      ?.catchUp(stored, TURN_CATCH_UP_LIMIT)
      .then((result) => ({ result, error: null }))
      .catch((error: Error) => ({ result: null, error }));
    const [{ matrix, rowOf }, embedded] = await Promise.all([
      this.cache.matrix(adventureId, this.embedder.model, hashes),
      this.query(state, texts)
        .then(async (query) => ({ query, ...(await this.embedQuery(query)), error: null }))
        .catch((error: Error) => ({ query: null, vector: null, usage: null, error })),
    ]);
    const ranked = candidates.map((memory, index) => ({
      id: memory.id,
      text: memory.text,
      pinned: memory.pinned,
      row: rowOf.get(hashes[index]) ?? null,
    }));
    const topK = state.settings.memoryTopK;
    const caught = await catchingUp;
    const usage = sumUsage([embedded.usage, caught?.result?.usage ?? null].filter(isUsage));
    const passages = await this.passages(state, texts, embedded, caught?.error ?? null);
    if (embedded.error) {
      const pinned = ranked.filter((memory) => memory.pinned);
      return {
        used: cited(rankByMatrix(pinned, matrix, new Float32Array(0), topK)),
        error: `memory retrieval failed: ${embedded.error.message}`,
        ...(usage && { usage }),
        ...(passages && { passages }),
      };
    }
    return {
      used:
        candidates.length === 0 ? [] : cited(rankByMatrix(ranked, matrix, embedded.vector!, topK)),
      ...(usage && { usage }),
      ...(passages && { passages }),
    };
  }

  /** Recall's candidates; a failure is reported beside the candidates found without it. */
  private async passages(
    state: AdventureState,
    texts: ActionTextReader,
    embedded: { query: RecallQuery | null; vector: Float32Array | null; error: Error | null },
    catchUpError: Error | null,
  ): Promise<RecalledPassages | undefined> {
    if (!this.recall) return undefined;
    const errors: string[] = [];
    if (catchUpError) errors.push(`passage index catch-up failed: ${catchUpError.message}`);
    if (embedded.error) errors.push('passages ranked by words only: the query was not embedded');
    let candidates: RecalledPassage[] = [];
    // Without the query there is nothing to search with (its texts could not be read).
    if (embedded.query) {
      try {
        candidates = await this.recall.search(state, embedded.query.focus, embedded.vector, texts);
      } catch (error) {
        errors.push(`passage recall failed: ${(error as Error).message}`);
      }
    }
    return { candidates, ...(errors.length > 0 && { error: errors.join('; ') }) };
  }
}

function isUsage(usage: ModelCallUsage | null): usage is ModelCallUsage {
  return usage !== null && usage.promptTokens + usage.completionTokens > 0;
}
