/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Every action and narration of every story tree, searchable by words and by meaning: a
// projection derived from the log (libs/memory-store's StoryPassageRepository writes it, and
// catches an adventure up from its projection), never the truth, so it can be dropped and
// rebuilt. One row per node, at its current text (`text_version`, the stream version of the
// event holding it); the text itself stays in the log. Which rows a turn may use is decided by
// the path at its head, in process, so undo, retry and branches never leak.
//
// `tsv` uses the `english` configuration (stems, stop words dropped: an OR query of a player's
// action then matches on its content words, not on every "the"). The GIN index is on `tsv`
// alone; the adventure is a filter on the matching rows. `vector` is the embedding as float32
// little-endian bytes (no pgvector); `seq` grows with every write, so a process's vector cache
// loads only the rows written since it last looked.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SEQUENCE story_passages_seq`.execute(db);
  await sql`
    CREATE TABLE story_passages (
      adventure_id text NOT NULL,
      action_id text NOT NULL,
      text_version integer NOT NULL,
      node_type text NOT NULL,
      tsv tsvector NOT NULL,
      model text NOT NULL,
      vector bytea NOT NULL,
      seq bigint NOT NULL DEFAULT nextval('story_passages_seq'),
      PRIMARY KEY (adventure_id, action_id)
    )
  `.execute(db);
  await sql`CREATE INDEX story_passages_tsv_idx ON story_passages USING gin (tsv)`.execute(db);
  await sql`CREATE INDEX story_passages_seq_idx ON story_passages (adventure_id, seq)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE story_passages`.execute(db);
  await sql`DROP SEQUENCE story_passages_seq`.execute(db);
}
