import { buildMatrix, rankByMatrix, rankMemories, type RankCandidate } from './index';

function vector(seed: number, dimensions = 12): Float32Array {
  let x = seed * 2654435761 + 7;
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = ((x >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

describe('rankByMatrix (the cached matrix path retrieval runs)', () => {
  const vectors = Array.from({ length: 40 }, (_, i) => vector(i + 1));
  const matrix = buildMatrix(vectors, 12);

  it('given candidates over matrix rows, then it ranks exactly as rankMemories does, pins first and counted', () => {
    const candidates: RankCandidate[] = vectors.map((v, i) => ({
      id: `m${i}`,
      text: `memory ${i}`,
      pinned: i === 3 || i === 17,
      vector: v,
    }));
    for (let q = 0; q < 10; q++) {
      const query = vector(1_000 + q);
      const expected = rankMemories(candidates, query, 5);
      const actual = rankByMatrix(
        candidates.map(({ id, text, pinned }, row) => ({ id, text, pinned, row })),
        matrix,
        query,
        5,
      );
      expect(actual).toEqual(expected);
      expect(actual.slice(0, 2).every((memory) => memory.pinned)).toBe(true);
      expect(actual).toHaveLength(5);
    }
  });

  it('skips rows that are no candidate now, and keeps pinned memories without a vector at 0', () => {
    const query = vector(77);
    const best = rankByMatrix(
      vectors.map((_, row) => ({ id: `m${row}`, text: '', pinned: false, row })),
      matrix,
      query,
      1,
    )[0];
    const without = rankByMatrix(
      [
        { id: 'pinned', text: 'not embedded yet', pinned: true, row: null },
        ...vectors
          .map((_, row) => ({ id: `m${row}`, text: '', pinned: false, row }))
          .filter((candidate) => candidate.id !== best.id),
      ],
      matrix,
      query,
      3,
    );
    expect(without[0]).toEqual({
      id: 'pinned',
      text: 'not embedded yet',
      similarity: 0,
      pinned: true,
    });
    expect(without.map((memory) => memory.id)).not.toContain(best.id);
    expect(without).toHaveLength(3);
  });

  it('with more pins than top-K, uses every pin and nothing else', () => {
    const ranked = rankByMatrix(
      vectors.map((_, row) => ({ id: `m${row}`, text: '', pinned: row < 4, row })),
      matrix,
      vector(5),
      2,
    );
    expect(ranked.map((memory) => memory.pinned)).toEqual([true, true, true, true]);
  });
});
