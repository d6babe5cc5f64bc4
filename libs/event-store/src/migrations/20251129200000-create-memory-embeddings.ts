/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Embeddings are derived data: content-addressed by (model, hash of the memory's text), so a
// rebuild from the memory events finds its vectors already paid for, an edited memory gets a
// new one, and a changed embedding model simply misses and re-embeds. float32 little-endian in
// bytea (pgvector is not available).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE memory_embeddings (
      model text NOT NULL,
      text_hash text NOT NULL,
      dimensions integer NOT NULL CHECK (dimensions > 0),
      vector bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (model, text_hash)
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE memory_embeddings`.execute(db);
}
