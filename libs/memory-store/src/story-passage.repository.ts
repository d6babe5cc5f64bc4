// The story_passages table (see its migration): every node of every story tree with its
// full-text vector and its embedding, derived from the log. The only code that writes or
// queries it. Raw SQL: the table is not in the event store's Database type.
import type { Database } from '@chronicle/event-store';
import { sql, type Kysely } from 'kysely';
import { fromVectorBytes, toVectorBytes } from './embedding.repository';

/** The text search configuration of `tsv` (stems, English stop words dropped). */
export const PASSAGE_TEXT_CONFIG = 'english';

/**
 * ts_rank's normalisation of a word's weight in a passage: 2 divides by the passage's length,
 * so a long narration does not outrank a short turn for saying a word more often. Chosen by the
 * recall bench's sweep (BENCHMARKS.md, "Issue 26: recall"): 0, 4, 16 and 32 (none, log of
 * unique words, harmonic distance, rank/(rank+1)) and 1 (1 + log length) each missed 2 more of
 * the 30 questions at 4k than 2 and 8 (length, unique words) did.
 */
const RANK_NORMALIZATION = 2;

export interface PassageRow {
  actionId: string;
  textVersion: number;
  type: string;
  /** The text as the prompt shows it (defused). */
  text: string;
  vector: ArrayLike<number>;
}

export interface LexicalHit {
  actionId: string;
  textVersion: number;
  /** Σ over the query's lexemes of idf × ts_rank (see searchWords). */
  score: number;
}

/** A query's lexemes with the passages holding each, and the ones a passage must hold to rank. */
export interface KnownTerms {
  terms: readonly { lexeme: string; passages: number }[];
  match: readonly string[];
  /** How many passages the adventure holds (idf's N). */
  passages: number;
}

export interface StoredVector {
  seq: number;
  actionId: string;
  textVersion: number;
  vector: Float32Array;
}

export class StoryPassageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Stores passages; a node already stored at the same or a newer text version (another
   * worker's write, a replay) is kept as it is. A new text version takes a new `seq`, so the
   * vector caches see it.
   */
  async save(adventureId: string, model: string, rows: readonly PassageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await sql`
      INSERT INTO story_passages (adventure_id, action_id, text_version, node_type, tsv, model, vector)
      SELECT ${adventureId}, u.action_id, u.text_version, u.node_type,
             to_tsvector(${PASSAGE_TEXT_CONFIG}::regconfig, u.text), ${model}, u.vector
      FROM unnest(
        ${rows.map((row) => row.actionId)}::text[],
        ${rows.map((row) => row.textVersion)}::integer[],
        ${rows.map((row) => row.type)}::text[],
        ${rows.map((row) => row.text)}::text[],
        ${rows.map((row) => toVectorBytes(row.vector))}::bytea[]
      ) AS u(action_id, text_version, node_type, text, vector)
      ON CONFLICT (adventure_id, action_id) DO UPDATE
        SET text_version = EXCLUDED.text_version, node_type = EXCLUDED.node_type,
            tsv = EXCLUDED.tsv, model = EXCLUDED.model, vector = EXCLUDED.vector,
            seq = nextval('story_passages_seq')
        WHERE story_passages.text_version < EXCLUDED.text_version
    `.execute(this.db);
  }

  /**
   * The adventure's passages holding one of `match` (the query's rarer lexemes, libs/memory's
   * matchingLexemes; every lexeme when nothing is pruned), best first, at most `limit`. Every
   * node of the tree is searched; the caller keeps those on the path.
   *
   * The one ranking rule: Σ over the query's lexemes (`terms`, each with the passages holding
   * it) of its rarity in this story (BM25's idf over the adventure's `passages`) times its
   * ts_rank in the passage, length-normalised. ts_rank_cd over the ORed words alone scored
   * "work" as high as "commute" and favoured long passages that say the common words often, so
   * the turn that answered ("my daily commute takes 45 minutes") ranked below narrations that
   * merely talked a lot (the recall bench's --diagnose; BENCHMARKS.md). The counts come from the
   * process (PassageTermCache): counting them here, per query, was most of a long story's search.
   */
  async searchWords(
    adventureId: string,
    { terms, match, passages }: KnownTerms,
    limit: number,
  ): Promise<LexicalHit[]> {
    if (match.length === 0 || terms.length === 0) return [];
    // The lexemes go in quoted, as lexemes: to_tsquery would stem them a second time. MATERIALIZED:
    // inlined, the planner ranked every passage against every lexeme before filtering.
    const result = await sql<{ action_id: string; text_version: number; score: number }>`
      WITH weighted AS MATERIALIZED (
        SELECT quote_literal(t.lexeme)::tsquery AS q,
               ln(1 + (${passages}::float8 - t.df + 0.5) / (t.df + 0.5)) AS idf
        FROM unnest(${terms.map((t) => t.lexeme)}::text[], ${terms.map((t) => t.passages)}::float8[])
          AS t(lexeme, df)
        WHERE t.df > 0
      ), matching AS MATERIALIZED (
        SELECT action_id, text_version, tsv FROM story_passages
        WHERE adventure_id = ${adventureId}
          AND tsv @@ array_to_string(
            ARRAY(SELECT quote_literal(l) FROM unnest(${match}::text[]) AS l), ' | '
          )::tsquery
      )
      SELECT p.action_id, p.text_version,
             sum(w.idf * ts_rank(p.tsv, w.q, ${RANK_NORMALIZATION}))::float8 AS score
      FROM matching p JOIN weighted w ON p.tsv @@ w.q
      GROUP BY p.action_id, p.text_version
      ORDER BY score DESC, p.action_id
      LIMIT ${limit}
    `.execute(this.db);
    return result.rows.map((row) => ({
      actionId: row.action_id,
      textVersion: row.text_version,
      score: Number(row.score),
    }));
  }

  /**
   * How many of the adventure's passages written after `afterSeq` hold each lexeme, the nodes
   * they are of, and the newest `seq` counted (null when none was written since).
   */
  async lexemesSince(
    adventureId: string,
    afterSeq: number,
  ): Promise<{ lastSeq: number | null; counts: Map<string, number>; actionIds: string[] }> {
    const result = await sql<{
      last_seq: string | null;
      action_ids: string[] | null;
      lexeme: string | null;
      passages: string;
    }>`
      WITH fresh AS (
        SELECT seq, action_id, tsv FROM story_passages
        WHERE adventure_id = ${adventureId} AND seq > ${afterSeq}
      ), counted AS (
        SELECT lexeme, count(*) AS passages
        FROM fresh, unnest(tsvector_to_array(tsv)) AS lexeme
        GROUP BY lexeme
      )
      SELECT max(seq) AS last_seq, array_agg(action_id) AS action_ids, NULL AS lexeme,
             NULL::bigint AS passages
      FROM fresh
      UNION ALL
      SELECT NULL, NULL, lexeme, passages FROM counted
    `.execute(this.db);
    // One row holds the nodes (the only one with no lexeme), each other row a lexeme.
    const nodes = result.rows.find((row) => row.lexeme === null)!;
    const lexemes = result.rows.filter((row) => row.lexeme !== null);
    return {
      lastSeq: nodes.last_seq === null ? null : Number(nodes.last_seq),
      counts: new Map(lexemes.map((row) => [row.lexeme as string, Number(row.passages)])),
      actionIds: nodes.action_ids ?? [],
    };
  }

  /** Each word's lexemes as `tsv` holds them (none for a stop word). */
  async lexemesOf(words: readonly string[]): Promise<string[][]> {
    if (words.length === 0) return [];
    const result = await sql<{ lexemes: string[] }>`
      SELECT tsvector_to_array(to_tsvector(${PASSAGE_TEXT_CONFIG}::regconfig, w.word)) AS lexemes
      FROM unnest(${words}::text[]) WITH ORDINALITY AS w(word, n)
      ORDER BY w.n
    `.execute(this.db);
    return result.rows.map((row) => row.lexemes);
  }

  /** The vectors of `model` written after `afterSeq`, in writing order. */
  async vectorsSince(
    adventureId: string,
    model: string,
    afterSeq: number,
  ): Promise<StoredVector[]> {
    const result = await sql<{
      seq: string;
      action_id: string;
      text_version: number;
      vector: Buffer;
    }>`
      SELECT seq, action_id, text_version, vector FROM story_passages
      WHERE adventure_id = ${adventureId} AND seq > ${afterSeq} AND model = ${model}
      ORDER BY seq
    `.execute(this.db);
    return result.rows.map((row) => ({
      seq: Number(row.seq),
      actionId: row.action_id,
      textVersion: row.text_version,
      vector: fromVectorBytes(row.vector),
    }));
  }

  /** The newest text version stored for the adventure (0 when none): how far it is indexed. */
  async indexedVersion(adventureId: string): Promise<number> {
    const result = await sql<{ version: number | null }>`
      SELECT max(text_version) AS version FROM story_passages WHERE adventure_id = ${adventureId}
    `.execute(this.db);
    return result.rows[0]?.version ?? 0;
  }

  async count(adventureId: string): Promise<number> {
    const result = await sql<{ n: string }>`
      SELECT count(*) AS n FROM story_passages WHERE adventure_id = ${adventureId}
    `.execute(this.db);
    return Number(result.rows[0].n);
  }
}
