// Retrieval's ranking step over one adventure's vectors kept in memory as Float32Array (the
// vector cache's shape): top-5 by cosine over 1,000 and 10,000 memories of 1,536 dimensions.
// `rankByMatrix` is what a turn runs (MemoryRetrievalService over the VectorCache's matrix:
// pins scored alone, the rest by `topKByCosine` with precomputed norms and a five-slot top
// list, rows that are no candidate skipped). `rankMemories` (a vector per candidate) and the bare
// `topKByCosine` are kept for comparison.
// Targets (a turn's retrieval must not be felt beside a model call): p50 ≤ 2 ms at 1,000 and
// ≤ 15 ms at 10,000. pgvector is not available, so
// the vectors are ranked in process.
import {
  buildMatrix,
  rankByMatrix,
  rankMemories,
  topKByCosine,
} from '../libs/memory/src/memory.ranking';
import { ms, timeRuns } from './stats';

const DIMENSIONS = 1536;
const TOP_K = 5;

function randomVector(seed: number): Float32Array {
  // xorshift: the same vectors on every run
  let x = seed * 2654435761 + 1;
  const vector = new Float32Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    vector[i] = ((x >>> 0) / 4294967296) * 2 - 1;
  }
  return vector;
}

export default async function run(): Promise<string> {
  const rows: string[] = [];
  const verdicts: string[] = [];
  for (const [count, target] of [
    [1_000, 2],
    [10_000, 15],
  ] as const) {
    const vectors = Array.from({ length: count }, (_, i) => randomVector(i + 1));
    const candidates = vectors.map((vector, i) => ({
      id: `m${i}`,
      text: `memory ${i}`,
      pinned: i === 0 || i === count / 2,
      vector,
    }));
    const matrix = buildMatrix(vectors, DIMENSIONS);
    const byRow = candidates.map(({ id, text, pinned }, row) => ({ id, text, pinned, row }));
    const queries = Array.from({ length: 16 }, (_, i) => randomVector(100_000 + i));
    let q = 0;
    const runs = count === 1_000 ? 300 : 60;
    const ranked = await timeRuns(runs, () => rankMemories(candidates, queries[q++ % 16], TOP_K));
    const matrixTop = await timeRuns(runs, () => topKByCosine(matrix, queries[q++ % 16], TOP_K));
    const retrieval = await timeRuns(runs, () =>
      rankByMatrix(byRow, matrix, queries[q++ % 16], TOP_K),
    );
    rows.push(
      `| ${count.toLocaleString('en')} | rankMemories | ${ms(ranked.p50)} | ${ms(ranked.p99)} |`,
      `| ${count.toLocaleString('en')} | topKByCosine (matrix) | ${ms(matrixTop.p50)} | ${ms(matrixTop.p99)} |`,
      `| ${count.toLocaleString('en')} | rankByMatrix (retrieval, 2 pins) | ${ms(retrieval.p50)} | ${ms(retrieval.p99)} |`,
    );
    verdicts.push(
      `- ${count.toLocaleString('en')} memories: target p50 ≤ ${target} ms — retrieval (rankByMatrix) ${retrieval.p50 <= target ? 'met' : 'MISSED'}; rankMemories ${ranked.p50 <= target ? 'met' : 'MISSED'}, bare matrix ${matrixTop.p50 <= target ? 'met' : 'MISSED'}`,
    );
  }
  return [
    '## Memory retrieval: top-5 by cosine, 1,536 dimensions',
    '',
    '| memories | ranking | p50 | p99 |',
    '|---:|---|---:|---:|',
    ...rows,
    '',
    ...verdicts,
  ].join('\n');
}
