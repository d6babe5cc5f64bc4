import type { Embedder, Embeddings } from './embedder';

export const OFFLINE_EMBEDDING_MODEL = 'offline-hash-256';
const DIMENSIONS = 256;
const WORD_WEIGHT = 1;
// trigrams let "boat" and "boats" share most of their weight
const TRIGRAM_WEIGHT = 0.5;

/** FNV-1a, 32 bit: fast, stable across runs and platforms. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5 | 0;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    // × the FNV prime (2^24 + 403) in shifts: Math.imul is slow inside jest's vm realm
    hash = (hash + (hash << 1) + (hash << 4) + (hash << 7) + (hash << 8) + (hash << 24)) | 0;
  }
  return hash >>> 0;
}

function addFeature(vector: Float64Array, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  // a signed bucket keeps unrelated collisions from always adding similarity
  const sign = hash & 0x80000000 ? -1 : 1;
  vector[hash % DIMENSIONS] += sign * weight;
}

/** A deterministic vector of hashed words and character trigrams, L2-normalised. */
export function offlineEmbedding(text: string): number[] {
  const vector = new Float64Array(DIMENSIONS);
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  for (const word of words) {
    addFeature(vector, `w:${word}`, WORD_WEIGHT);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i += 1)
      addFeature(vector, `t:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  return Array.from(vector, (x) => (norm > 0 ? x / norm : 0));
}

/**
 * The embedder used when no API key is configured: no network, same text →
 * same vector, and texts sharing words score higher by cosine. Good enough to
 * exercise retrieval end to end; not a semantic model.
 */
export class OfflineEmbedder implements Embedder {
  readonly model = OFFLINE_EMBEDDING_MODEL;
  readonly dimensions = DIMENSIONS;

  /** Free: no provider, so the usage is zero. */
  async embed(texts: string[]): Promise<Embeddings> {
    return {
      vectors: texts.map(offlineEmbedding),
      usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 },
      model: this.model,
    };
  }
}
