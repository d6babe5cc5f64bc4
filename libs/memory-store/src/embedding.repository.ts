// Vectors by (model, text hash): derived from the memory events, never the truth. float32
// little-endian bytes in bytea.
import { createHash } from 'node:crypto';
import type { Database } from '@chronicle/event-store';
import { sql, type Kysely } from 'kysely';

export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** float32 little-endian bytes, as the vector columns store them. */
export function toVectorBytes(vector: ArrayLike<number>): Buffer {
  const floats = Float32Array.from(vector as ArrayLike<number>);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

export function fromVectorBytes(bytes: Buffer): Float32Array {
  // Copied out: the driver's buffer may share a pool and need not be 4-byte aligned.
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

export class EmbeddingRepository {
  // The event store's Kysely; this table is not in its Database type, so queries are raw SQL.
  constructor(private readonly db: Kysely<Database>) {}

  /** The stored vectors of `hashes` for `model`; missing ones are absent from the map. */
  async find(model: string, hashes: readonly string[]): Promise<Map<string, Float32Array>> {
    const found = new Map<string, Float32Array>();
    if (hashes.length === 0) return found;
    const result = await sql<{ text_hash: string; vector: Buffer }>`
      SELECT text_hash, vector FROM memory_embeddings
      WHERE model = ${model} AND text_hash = ANY(${[...new Set(hashes)]}::text[])
    `.execute(this.db);
    for (const row of result.rows) found.set(row.text_hash, fromVectorBytes(row.vector));
    return found;
  }

  /** Stores vectors; one already stored (another worker's, a rebuild's) is kept as it is. */
  async save(model: string, rows: ReadonlyArray<{ hash: string; vector: ArrayLike<number> }>) {
    for (const row of rows) {
      await sql`
        INSERT INTO memory_embeddings (model, text_hash, dimensions, vector)
        VALUES (${model}, ${row.hash}, ${row.vector.length}, ${toVectorBytes(row.vector)})
        ON CONFLICT (model, text_hash) DO NOTHING
      `.execute(this.db);
    }
  }

  async count(model?: string): Promise<number> {
    const result = model
      ? await sql<{
          n: string;
        }>`SELECT count(*) AS n FROM memory_embeddings WHERE model = ${model}`.execute(this.db)
      : await sql<{ n: string }>`SELECT count(*) AS n FROM memory_embeddings`.execute(this.db);
    return Number(result.rows[0].n);
  }
}
