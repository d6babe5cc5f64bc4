import type { ModelUsage } from './model-client.types';

/** One embedding call's answer: the vectors, and what the provider says it cost. */
export interface Embeddings {
  /** one vector per text, in the same order */
  vectors: number[][];
  /** prompt tokens of every request made (completion tokens are always 0) */
  usage: ModelUsage;
  /** the model the provider says answered */
  model: string;
}

/** Turns texts into vectors; one vector per text, in the same order. */
export interface Embedder {
  /** recorded beside each vector, so changing the model re-embeds */
  readonly model: string;
  readonly dimensions?: number;
  embed(texts: string[]): Promise<Embeddings>;
}

/** Cosine similarity; vectors of different lengths (another model's) score 0, as in the seed. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i];
    const y = b[i];
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (normA === 0 || normB === 0) return 0;
  return dot / Math.sqrt(normA * normB);
}
