// Retrieval ranking, over plain data. Vectors are Float32Array rows of one
// matrix per adventure, with their norms computed once, so a query costs one pass of
// multiply-adds and a top-K kept in a small array (no sort of every score).

export interface RankedMemory {
  id: string;
  text: string;
  /** Cosine similarity to the query, to 4 decimal places. */
  similarity: number;
  pinned: boolean;
}

export interface RankCandidate {
  id: string;
  text: string;
  pinned: boolean;
  /** null when not embedded (yet), or embedded by another model. */
  vector: Float32Array | null;
}

export function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  return Math.sqrt(sum);
}

/** Cosine; a dimension mismatch or a zero vector scores 0 (as in the seed). */
export function cosine(a: Float32Array, b: Float32Array, normA = norm(a), normB = norm(b)): number {
  if (a.length !== b.length || a.length === 0 || normA === 0 || normB === 0) return 0;
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return dot / (normA * normB);
}

/** Cosine of `query` (norm known) and `vector` in one pass over `vector`: dot and norm together. */
function fusedCosine(query: Float32Array, queryNorm: number, vector: Float32Array): number {
  if (vector.length !== query.length || queryNorm === 0) return 0;
  let d0 = 0;
  let d1 = 0;
  let n0 = 0;
  let n1 = 0;
  let i = 0;
  for (; i + 1 < vector.length; i += 2) {
    const a = vector[i];
    const b = vector[i + 1];
    d0 += a * query[i];
    d1 += b * query[i + 1];
    n0 += a * a;
    n1 += b * b;
  }
  if (i < vector.length) {
    d0 += vector[i] * query[i];
    n0 += vector[i] * vector[i];
  }
  const vectorNorm = Math.sqrt(n0 + n1);
  return vectorNorm === 0 ? 0 : (d0 + d1) / (vectorNorm * queryNorm);
}

interface Scored {
  candidate: RankCandidate;
  order: number;
  score: number;
}

/** Inserts into `best` (kept sorted, at most `k` long); ties keep the earlier candidate first. */
function keepBest(best: Scored[], item: Scored, k: number): void {
  if (k <= 0 || (best.length === k && item.score <= best[k - 1].score)) return;
  let at = best.length < k ? best.length : k - 1;
  if (best.length < k) best.push(item);
  while (at > 0 && best[at - 1].score < item.score) {
    best[at] = best[at - 1];
    at--;
  }
  best[at] = item;
}

/**
 * The memories a prompt uses: every pinned one (pins are always used and count toward top-K),
 * then the best-scoring others up to `topK`. Pinned first, each group by similarity, highest
 * first; ties keep the candidates' order (oldest first). One pass, no sort of every score.
 */
export function rankMemories(
  candidates: readonly RankCandidate[],
  query: Float32Array,
  topK: number,
): RankedMemory[] {
  const queryNorm = norm(query);
  const pinned: Scored[] = [];
  const pinnedCount = candidates.reduce((n, candidate) => n + (candidate.pinned ? 1 : 0), 0);
  const room = Math.max(0, topK - pinnedCount);
  const others: Scored[] = [];
  candidates.forEach((candidate, order) => {
    if (!candidate.pinned && (candidate.vector === null || room === 0)) return;
    const score = candidate.vector ? fusedCosine(query, queryNorm, candidate.vector) : 0;
    if (candidate.pinned) pinned.push({ candidate, order, score });
    else keepBest(others, { candidate, order, score }, room);
  });
  pinned.sort((a, b) => b.score - a.score || a.order - b.order);
  return [...pinned, ...others].map(({ candidate, score }) => ({
    id: candidate.id,
    text: candidate.text,
    similarity: round4(score),
    pinned: candidate.pinned,
  }));
}

/** Rows of one `dimensions`-wide matrix, with their norms: an adventure's vectors in memory. */
export interface VectorMatrix {
  dimensions: number;
  count: number;
  data: Float32Array;
  norms: Float32Array;
}

export function buildMatrix(vectors: readonly Float32Array[], dimensions: number): VectorMatrix {
  const data = new Float32Array(vectors.length * dimensions);
  const norms = new Float32Array(vectors.length);
  vectors.forEach((vector, row) => {
    if (vector.length !== dimensions) return; // another model's vector: a zero row scores 0
    data.set(vector, row * dimensions);
    norms[row] = norm(vector);
  });
  return { dimensions, count: vectors.length, data, norms };
}

/**
 * The dot product of two vectors of one length, in four running sums: the matrix scan's inner
 * loop, over a view of one row. As a small function of its own V8 optimises it apart from the
 * scan and without the row offset in every load, which made the 10,000-row scan ~12% faster
 * than the same loop written inside the scan (bench/retrieval.bench.ts).
 */
function dot(row: Float32Array, query: Float32Array): number {
  const length = row.length;
  const end = length - (length % 4);
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  for (let i = 0; i < end; i += 4) {
    d0 += row[i] * query[i];
    d1 += row[i + 1] * query[i + 1];
    d2 += row[i + 2] * query[i + 2];
    d3 += row[i + 3] * query[i + 3];
  }
  for (let i = end; i < length; i++) d0 += row[i] * query[i];
  return d0 + d1 + d2 + d3;
}

/** The `k` best rows by cosine to `query`, best first: `[row, score]` pairs. */
export function topKByCosine(
  matrix: VectorMatrix,
  query: Float32Array,
  k: number,
  skip?: (row: number) => boolean,
): Array<[number, number]> {
  const { dimensions, data, norms } = matrix;
  const best: Array<[number, number]> = [];
  if (query.length !== dimensions || k <= 0) return best;
  const queryNorm = norm(query);
  if (queryNorm === 0) return best;
  for (let row = 0; row < matrix.count; row++) {
    if (norms[row] === 0) continue;
    const base = row * dimensions;
    const score = dot(data.subarray(base, base + dimensions), query) / (norms[row] * queryNorm);
    if (best.length === k && score <= best[k - 1][1]) continue;
    // Asked only of a row that would enter the k best: a skipped row never changes them, so the
    // result is the same, and most rows of a long story never get this far (a path lookup each).
    if (skip && skip(row)) continue;
    let at = best.length < k ? best.length : k - 1;
    if (best.length < k) best.push([row, score]);
    while (at > 0 && best[at - 1][1] < score) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = [row, score];
  }
  return best;
}

/** A retrieval candidate whose vector is a row of the adventure's matrix (null: not embedded). */
export interface MatrixCandidate {
  id: string;
  text: string;
  pinned: boolean;
  row: number | null;
}

function rowCosine(matrix: VectorMatrix, row: number, query: Float32Array, queryNorm: number) {
  const { dimensions, data, norms } = matrix;
  if (query.length !== dimensions || norms[row] === 0 || queryNorm === 0) return 0;
  let dot = 0;
  const base = row * dimensions;
  for (let i = 0; i < dimensions; i++) dot += data[base + i] * query[i];
  return dot / (norms[row] * queryNorm);
}

/**
 * `rankMemories` over the cached matrix: the same answer (pins always used and counted toward
 * top-K, pinned first, then the best others), but the others are scored in one pass over the
 * matrix with its norms computed once. Rows that are no candidate now (withdrawn, forgotten,
 * another text) are skipped; two candidates of one text share a row, and the older one stands.
 */
export function rankByMatrix(
  candidates: readonly MatrixCandidate[],
  matrix: VectorMatrix,
  query: Float32Array,
  topK: number,
): RankedMemory[] {
  const queryNorm = norm(query);
  const pinned = candidates
    .map((candidate, order) => ({ candidate, order }))
    .filter(({ candidate }) => candidate.pinned)
    .map(({ candidate, order }) => ({
      candidate,
      order,
      score: candidate.row === null ? 0 : rowCosine(matrix, candidate.row, query, queryNorm),
    }))
    .sort((a, b) => b.score - a.score || a.order - b.order);
  const room = Math.max(0, topK - pinned.length);
  const owner = new Int32Array(matrix.count).fill(-1);
  candidates.forEach((candidate, index) => {
    if (!candidate.pinned && candidate.row !== null && owner[candidate.row] < 0) {
      owner[candidate.row] = index;
    }
  });
  const others = room === 0 ? [] : topKByCosine(matrix, query, room, (row) => owner[row] < 0);
  return [
    ...pinned.map(({ candidate, score }) => ({ candidate, score })),
    ...others.map(([row, score]) => ({ candidate: candidates[owner[row]], score })),
  ].map(({ candidate, score }) => ({
    id: candidate.id,
    text: candidate.text,
    similarity: round4(score),
    pinned: candidate.pinned,
  }));
}
