import { createEmbedder, createModelClient, isOfflineConfig } from './model-client.factory';
import { OfflineEmbedder } from './offline.embedder';
import { OfflineNarrator } from './offline.narrator';
import { OpenAiEmbedder } from './openai.embedder';
import { OpenAiModelClient } from './openai-model.client';

const base = { baseURL: 'http://localhost:11434/v1', model: 'llama3', timeoutMs: 120_000 };

describe('createModelClient / createEmbedder', () => {
  it('choose the offline implementations when no key is configured', () => {
    for (const apiKey of [undefined, '', '   ']) {
      expect(createModelClient({ ...base, apiKey })).toBeInstanceOf(OfflineNarrator);
      expect(createEmbedder({ ...base, apiKey, embeddingModel: 'e' })).toBeInstanceOf(
        OfflineEmbedder,
      );
      expect(isOfflineConfig({ apiKey })).toBe(true);
    }
  });

  it('choose the OpenAI-compatible client when a key is configured', () => {
    expect(createModelClient({ ...base, apiKey: 'k' })).toBeInstanceOf(OpenAiModelClient);
    const embedder = createEmbedder({ ...base, apiKey: 'k', embeddingModel: 'nomic-embed-text' });
    expect(embedder).toBeInstanceOf(OpenAiEmbedder);
    expect(embedder.model).toBe('nomic-embed-text');
  });

  it('fall back to the offline embedder when no embedding model is set', () => {
    expect(createEmbedder({ ...base, apiKey: 'k' })).toBeInstanceOf(OfflineEmbedder);
  });
});
