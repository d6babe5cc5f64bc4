// The passages' vectors kept in process per adventure, as one matrix (libs/memory's VectorMatrix)
// loaded incrementally by `seq`: a turn reads only the rows written since the last one, and the
// semantic ranking is one pass of multiply-adds with no query for vectors. A cache of derived
// data, bounded by an LRU of adventures: an adventure it drops is loaded again on its next turn,
// and nothing is ever dropped from search.
import { LruCache } from '@chronicle/platform';
import { VECTOR_CACHE_ADVENTURES, type VectorMatrix } from '@chronicle/memory';
import type { StoredVector, StoryPassageRepository } from './story-passage.repository';

export class AdventurePassageVectors {
  /** Row by action id: a new text version of a node overwrites its row. */
  readonly rowOf = new Map<string, number>();
  actionIds: string[] = [];
  textVersions = new Int32Array(0);
  matrix: VectorMatrix = {
    dimensions: 0,
    count: 0,
    data: new Float32Array(0),
    norms: new Float32Array(0),
  };
  lastSeq = 0;
  /** The load under way, so concurrent turns of one adventure read the new rows once. */
  loading: Promise<void> | null = null;

  constructor(readonly model: string) {}

  add(rows: readonly StoredVector[]): void {
    for (const row of rows) {
      this.lastSeq = Math.max(this.lastSeq, row.seq);
      let dimensions = this.matrix.dimensions;
      if (dimensions === 0) dimensions = row.vector.length;
      let at = this.rowOf.get(row.actionId);
      if (at === undefined) {
        at = this.matrix.count;
        this.grow(at + 1, dimensions);
        this.rowOf.set(row.actionId, at);
        this.actionIds[at] = row.actionId;
        this.matrix = { ...this.matrix, dimensions, count: at + 1 };
      }
      this.textVersions[at] = row.textVersion;
      const { data, norms } = this.matrix;
      // Another width (a model that changed under the same name) stays a zero row: never ranked.
      if (row.vector.length !== dimensions) {
        data.fill(0, at * dimensions, (at + 1) * dimensions);
        norms[at] = 0;
        continue;
      }
      data.set(row.vector, at * dimensions);
      let sum = 0;
      for (let i = 0; i < row.vector.length; i++) sum += row.vector[i] * row.vector[i];
      norms[at] = Math.sqrt(sum);
    }
  }

  /** Room for `rows` rows, doubling, so a new passage costs no full copy. */
  private grow(rows: number, dimensions: number): void {
    const { data, norms } = this.matrix;
    if (rows * dimensions <= data.length && rows <= this.textVersions.length) return;
    const capacity = Math.max(64, rows * 2);
    const grownData = new Float32Array(capacity * dimensions);
    grownData.set(data);
    const grownNorms = new Float32Array(capacity);
    grownNorms.set(norms);
    const grownVersions = new Int32Array(capacity);
    grownVersions.set(this.textVersions);
    this.textVersions = grownVersions;
    this.matrix = { ...this.matrix, data: grownData, norms: grownNorms };
  }
}

export class PassageVectorCache {
  private readonly entries: LruCache<string, AdventurePassageVectors>;

  constructor(
    private readonly passages: StoryPassageRepository,
    capacity = VECTOR_CACHE_ADVENTURES,
  ) {
    this.entries = new LruCache({ capacity });
  }

  /** The adventure's vectors of `model`, with every row stored so far. */
  async vectors(adventureId: string, model: string): Promise<AdventurePassageVectors> {
    let entry = this.entries.get(adventureId);
    if (!entry || entry.model !== model) {
      entry = new AdventurePassageVectors(model);
      this.entries.set(adventureId, entry);
    }
    const current = entry;
    while (current.loading) await current.loading;
    current.loading = this.passages
      .vectorsSince(adventureId, model, current.lastSeq)
      .then((rows) => current.add(rows))
      .finally(() => {
        current.loading = null;
      });
    await current.loading;
    return current;
  }

  get size(): number {
    return this.entries.size;
  }
}
