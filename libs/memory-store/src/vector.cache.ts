// Vectors kept in process per adventure (an LRU of VECTOR_CACHE_ADVENTURES), as one Float32Array
// matrix with its norms, so a turn's retrieval is one pass of multiply-adds and reads the
// database only for memories it has not seen yet. An optimisation, never a requirement: any
// worker may serve any adventure, and a miss reads from the table.
import { LruCache } from '@chronicle/platform';
import { VECTOR_CACHE_ADVENTURES, type VectorMatrix } from '@chronicle/memory';
import type { EmbeddingRepository } from './embedding.repository';

/** An adventure's cached vectors: rows by text hash, in the order they were first seen. */
export interface CachedVectors {
  matrix: VectorMatrix;
  rowOf: ReadonlyMap<string, number>;
}

class AdventureVectors implements CachedVectors {
  readonly rowOf = new Map<string, number>();
  matrix: VectorMatrix = {
    dimensions: 0,
    count: 0,
    data: new Float32Array(0),
    norms: new Float32Array(0),
  };

  constructor(readonly model: string) {}

  /** Appends rows, growing the buffers by doubling so a new memory costs no full copy. */
  add(vectors: ReadonlyMap<string, Float32Array>): void {
    for (const [hash, vector] of vectors) {
      if (this.rowOf.has(hash)) continue;
      const { count } = this.matrix;
      let { dimensions, data, norms } = this.matrix;
      if (count === 0 && dimensions === 0) dimensions = vector.length;
      if ((count + 1) * dimensions > data.length) {
        const rows = Math.max(16, count * 2);
        const grown = new Float32Array(rows * dimensions);
        grown.set(data);
        const grownNorms = new Float32Array(rows);
        grownNorms.set(norms);
        data = grown;
        norms = grownNorms;
      }
      // Another width (a model that changed under the same name) stays a zero row: scores 0.
      if (vector.length === dimensions) {
        data.set(vector, count * dimensions);
        let sum = 0;
        for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
        norms[count] = Math.sqrt(sum);
      }
      this.rowOf.set(hash, count);
      this.matrix = { dimensions, count: count + 1, data, norms };
    }
  }
}

export class VectorCache {
  private readonly entries: LruCache<string, AdventureVectors>;

  constructor(
    private readonly embeddings: EmbeddingRepository,
    capacity = VECTOR_CACHE_ADVENTURES,
  ) {
    this.entries = new LruCache({ capacity });
  }

  /** The adventure's matrix, holding every embedded vector of `hashes` (fetched when new). */
  async matrix(
    adventureId: string,
    model: string,
    hashes: readonly string[],
  ): Promise<CachedVectors> {
    let entry = this.entries.get(adventureId);
    if (!entry || entry.model !== model) {
      entry = new AdventureVectors(model);
      this.entries.set(adventureId, entry);
    }
    const missing = hashes.filter((hash) => !entry.rowOf.has(hash));
    if (missing.length > 0) entry.add(await this.embeddings.find(model, missing));
    return entry;
  }

  get size(): number {
    return this.entries.size;
  }
}
