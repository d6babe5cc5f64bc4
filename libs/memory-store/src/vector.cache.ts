// Vectors kept in process per adventure (an LRU of VECTOR_CACHE_ADVENTURES), so a turn's
// retrieval reads the database only for memories it has not seen yet. An optimisation, never a
// requirement: any worker may serve any adventure, and a miss reads from the table.
import { VECTOR_CACHE_ADVENTURES } from '@chronicle/memory';
import type { EmbeddingRepository } from './embedding.repository';

interface Entry {
  model: string;
  vectors: Map<string, Float32Array>;
}

export class VectorCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly embeddings: EmbeddingRepository,
    private readonly capacity = VECTOR_CACHE_ADVENTURES,
  ) {}

  /** The vectors of `hashes` (those embedded), from memory first, then the table. */
  async vectors(
    adventureId: string,
    model: string,
    hashes: readonly string[],
  ): Promise<Map<string, Float32Array>> {
    let entry = this.entries.get(adventureId);
    if (!entry || entry.model !== model) entry = { model, vectors: new Map() };
    this.entries.delete(adventureId);
    this.entries.set(adventureId, entry);
    if (this.entries.size > this.capacity) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
    const missing = hashes.filter((hash) => !entry.vectors.has(hash));
    if (missing.length > 0) {
      for (const [hash, vector] of await this.embeddings.find(model, missing)) {
        entry.vectors.set(hash, vector);
      }
    }
    return entry.vectors;
  }

  get size(): number {
    return this.entries.size;
  }
}
