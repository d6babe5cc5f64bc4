import { cosineSimilarity } from './embedder';
import { OFFLINE_EMBEDDING_MODEL, OfflineEmbedder } from './offline.embedder';

describe('cosineSimilarity', () => {
  it('is 1 for the same direction, 0 for orthogonal, -1 for opposite', () => {
    expect(cosineSimilarity([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 10);
    expect(cosineSimilarity([1, 0], [0, 1])).toBe(0);
    expect(cosineSimilarity([1, 1], [-1, -1])).toBeCloseTo(-1, 10);
  });

  it('scores a dimension mismatch, an empty or a zero vector 0', () => {
    expect(cosineSimilarity([1, 2, 3], [1, 2])).toBe(0);
    expect(cosineSimilarity([], [])).toBe(0);
    expect(cosineSimilarity([0, 0], [1, 1])).toBe(0);
  });
});

describe('OfflineEmbedder', () => {
  const embedder = new OfflineEmbedder();

  it('names its model and gives unit vectors of 256 dimensions', async () => {
    const [vector] = (await embedder.embed(['Mira hides the brass key in the lighthouse.']))
      .vectors;
    expect(embedder.model).toBe(OFFLINE_EMBEDDING_MODEL);
    expect(vector).toHaveLength(256);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 10);
  });

  it('is deterministic', async () => {
    const texts = ['The storm broke over the harbor.', 'Mira laughed.'];
    expect(await embedder.embed(texts)).toEqual(await new OfflineEmbedder().embed(texts));
    expect((await embedder.embed(texts)).usage).toMatchObject({ promptTokens: 0 });
  });

  it('ranks a text sharing words above an unrelated one', async () => {
    const [query, related, unrelated] = (
      await embedder.embed([
        'Mira and the brass key at the lighthouse',
        'Mira gave the player a brass key to the lighthouse lamp room.',
        'The merchant guild raised taxes on grain in the capital.',
      ])
    ).vectors;
    expect(cosineSimilarity(query, related)).toBeGreaterThan(
      cosineSimilarity(query, unrelated) + 0.2,
    );
  });

  it('lets word forms share weight through trigrams', async () => {
    const [boat, boats, castle] = (await embedder.embed(['boat', 'boats', 'castle'])).vectors;
    expect(cosineSimilarity(boat, boats)).toBeGreaterThan(cosineSimilarity(boat, castle));
  });

  it('gives an empty text a zero vector rather than NaN', async () => {
    const [vector] = (await embedder.embed([''])).vectors;
    expect(vector.every((x) => x === 0)).toBe(true);
  });
});
