// Verbatim recall of the story: keeps the story_passages projection caught up with an
// adventure's tree, and finds the passages of the current path a turn's action is about, by
// words (Postgres full text) and by meaning (the embeddings, in process), fused by reciprocal
// rank. Pure parts (the query's words, the path filter, the fusion) are libs/memory's.
import type { AdventureState, ModelCallUsage } from '@chronicle/adventure';
import type { ActionTextReader } from '@chronicle/adventure-store';
import type { RecalledPassage } from '@chronicle/context';
import type { Embedder } from '@chronicle/llm';
import {
  MAX_EMBED_BATCH,
  RANKING_DEPTH,
  RECALL_CANDIDATES,
  fuseRankings,
  LEXICAL_MATCH_BUDGET,
  matchingLexemes,
  onPath,
  passagesToIndex,
  queryWords,
  StoryPathIndex,
  topKByCosine,
  VECTOR_CACHE_ADVENTURES,
} from '@chronicle/memory';
import { defuseStateFences } from '@chronicle/narrative';
import { LruCache } from '@chronicle/platform';
import { sumUsage } from './model-usage';
import { PassageTermCache } from './passage-term.cache';
import type { PassageVectorCache } from './passage-vector.cache';
import type { LexicalHit, StoryPassageRepository } from './story-passage.repository';

/**
 * The most passages a turn indexes before its prompt is built. The memory worker indexes the
 * rest after each narration, so a turn finds at most the last turn's two; only an adventure
 * from before the index existed (or whose memory passes fell far behind) has more, and its
 * turn is not held up for all of them.
 */
export const TURN_CATCH_UP_LIMIT = 256;
/** Lexical hits read per query: the path filter drops those of other branches. */
const LEXICAL_READ = RANKING_DEPTH * 2;
/** Adventures whose indexed version this process remembers. */
const CURSOR_CACHE = 1024;

export interface CatchUpResult {
  indexed: number;
  /** What embedding the new passages cost; null when nothing was embedded or it was free. */
  usage: ModelCallUsage | null;
}

/**
 * Settles once what is already on its way to Postgres has been written: the pool hands out a
 * connection on the next tick, after the promise jobs, so a scan run straight after a query is
 * asked for would hold the event loop before the query leaves and the two would not overlap.
 */
const afterPendingSends = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class StoryRecallService {
  /** How far each adventure is indexed, as far as this process knows (a floor: others write too). */
  private readonly indexedVersions = new LruCache<string, number>({ capacity: CURSOR_CACHE });
  /** Each adventure's story at the head, brought to each turn's projection (StoryPathIndex). */
  private readonly paths = new LruCache<string, StoryPathIndex>({
    capacity: VECTOR_CACHE_ADVENTURES,
  });

  constructor(
    private readonly passages: StoryPassageRepository,
    private readonly texts: ActionTextReader,
    private readonly embedder: Embedder,
    private readonly vectors: PassageVectorCache,
    private readonly terms: PassageTermCache = new PassageTermCache(passages),
    /** How many passages a lexical search ranks at most (see matchingLexemes). */
    private readonly matchBudget: number = LEXICAL_MATCH_BUDGET,
  ) {}

  /**
   * Indexes every node of the tree whose current text is not indexed yet, oldest first, at most
   * `limit` (a turn's bound; the memory worker passes none). Idempotent: a passage stored by
   * another process is kept.
   */
  async catchUp(state: AdventureState, limit = Infinity): Promise<CatchUpResult> {
    const adventureId = state.id;
    if (adventureId === null) return { indexed: 0, usage: null };
    let known = this.indexedVersions.get(adventureId);
    if (known !== undefined && known >= state.version) return { indexed: 0, usage: null };
    if (known === undefined) known = await this.passages.indexedVersion(adventureId);
    const pending = passagesToIndex(state, known).slice(0, limit);
    const usages: ModelCallUsage[] = [];
    for (let start = 0; start < pending.length; start += MAX_EMBED_BATCH) {
      const batch = pending.slice(start, start + MAX_EMBED_BATCH);
      const texts = (
        await this.texts.readActionTexts(
          adventureId,
          batch.map(({ actionId, textVersion }) => ({ id: actionId, textVersion })),
        )
      ).map(defuseStateFences);
      const embedded = await this.embedder.embed(texts);
      const { promptTokens, completionTokens } = embedded.usage;
      if (promptTokens + completionTokens > 0)
        usages.push({ model: embedded.model, ...embedded.usage });
      await this.passages.save(
        adventureId,
        this.embedder.model,
        batch.map((passage, i) => ({
          actionId: passage.actionId,
          textVersion: passage.textVersion,
          type: passage.type,
          text: texts[i],
          vector: embedded.vectors[i],
        })),
      );
      known = Math.max(known, batch[batch.length - 1].textVersion);
    }
    // Everything up to the head is in when nothing was left for later.
    const done = pending.length < limit || limit === Infinity;
    this.indexedVersions.set(adventureId, done ? Math.max(known, state.version) : known);
    return { indexed: pending.length, usage: sumUsage(usages) };
  }

  /**
   * The passages of the current path that `focus` (the action and its entities) is about, best
   * fused first, at most RECALL_CANDIDATES, with their texts: ranked by the focus's words
   * (searchWords) and by cosine to `vector` (null: by words only). Nodes off the path (undone,
   * another branch, the take being retried, an old text version) never come back.
   */
  async search(
    state: AdventureState,
    focus: string,
    vector: Float32Array | null,
    /** Reads the passages' texts (a dry run's reader knows the action it supposes). */
    texts: ActionTextReader = this.texts,
  ): Promise<RecalledPassage[]> {
    const adventureId = state.id;
    if (adventureId === null) return [];
    // The two rankings side by side. The path filter and the cosine scan wait until the
    // full-text query is out, and run while it is. Each reads the adventure's path index right
    // after bringing it to this state, with no await between: another turn may sync it too.
    const path = () => this.pathIndexOf(adventureId, state);
    let queryOut!: () => void;
    const sent = new Promise<void>((resolve) => (queryOut = resolve)).then(afterPendingSends);
    const [lexical, semantic] = await Promise.all([
      this.lexicalRanking(adventureId, focus, path, queryOut),
      vector ? this.semanticRanking(adventureId, vector, path, sent) : [],
    ]);
    const fused = fuseRankings(lexical, semantic).slice(0, RECALL_CANDIDATES);
    if (fused.length === 0) return [];
    const onThePath = path();
    const found = fused.flatMap((passage) => {
      const place = onThePath.placeOf(passage.actionId);
      return place ? [{ passage, ...place }] : [];
    });
    const read = await texts.readActionTexts(
      adventureId,
      found.map(({ entry }) => entry),
    );
    return found.map(({ passage, entry, position }, i) => ({
      ...passage,
      type: entry.type,
      text: defuseStateFences(read[i]),
      tokens: entry.tokens,
      position,
    }));
  }

  /** The adventure's path index, brought to `state`: read it before any await. */
  private pathIndexOf(adventureId: string, state: AdventureState): StoryPathIndex {
    let index = this.paths.get(adventureId);
    if (!index) {
      index = new StoryPathIndex();
      this.paths.set(adventureId, index);
    }
    return index.sync(state);
  }

  /**
   * The passages on the path holding the focus's words, best first (searchWords), at most
   * RANKING_DEPTH; only those holding one of its rarer lexemes are ranked (matchingLexemes).
   */
  private async lexicalRanking(
    adventureId: string,
    focus: string,
    path: () => StoryPathIndex,
    /** Called once the query is sent (or none will be). */
    queryOut: () => void,
  ): Promise<string[]> {
    const words = queryWords(focus);
    if (words.length === 0) {
      queryOut();
      return [];
    }
    let searching: Promise<LexicalHit[]>;
    try {
      const [lexemes, { counts, passages }] = await Promise.all([
        this.terms.lexemes(words),
        this.terms.frequencies(adventureId),
      ]);
      const terms = lexemes.map((lexeme) => ({ lexeme, passages: counts.get(lexeme) ?? 0 }));
      searching = this.passages.searchWords(
        adventureId,
        { terms, match: matchingLexemes(terms, this.matchBudget), passages },
        LEXICAL_READ,
      );
    } finally {
      queryOut();
    }
    const hits = await searching;
    const onThePath = path();
    return hits
      .filter((hit) => onPath(hit, onThePath))
      .slice(0, RANKING_DEPTH)
      .map((hit) => hit.actionId);
  }

  /** The passages on the path nearest `vector` by cosine, best first, at most RANKING_DEPTH. */
  private async semanticRanking(
    adventureId: string,
    vector: Float32Array,
    path: () => StoryPathIndex,
    /** Settles once the full-text query is out: the scan runs while it is. */
    queryOut: Promise<void>,
  ): Promise<string[]> {
    const [cached] = await Promise.all([
      this.vectors.vectors(adventureId, this.embedder.model),
      queryOut,
    ]);
    const onThePath = path();
    return topKByCosine(
      cached.matrix,
      vector,
      RANKING_DEPTH,
      (row) => onThePath.textVersionOf(cached.actionIds[row]) !== cached.textVersions[row],
    ).map(([row]) => cached.actionIds[row]);
  }
}
