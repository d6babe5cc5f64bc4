import {
  createEmbedder,
  createModelClient,
  isOfflineConfig,
  MODEL_JOBS,
  modelConfigOf,
  modelConfigsOf,
} from './model-client.factory';
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

describe('modelConfigOf: a model per job', () => {
  const installation = {
    modelBaseUrl: 'https://api.openai.com/v1',
    modelApiKey: 'main-key',
    modelName: 'gpt-4o',
    embeddingModel: 'text-embedding-3-small',
    modelTimeoutMs: 60_000,
  };

  it('gives every job the narration endpoint, key and model when none is set of its own', () => {
    for (const job of MODEL_JOBS) {
      const config = modelConfigOf(installation, job);
      expect(config).toMatchObject({
        baseURL: 'https://api.openai.com/v1',
        apiKey: 'main-key',
        model: 'gpt-4o',
      });
      expect(config.jobModel).toBeUndefined();
    }
  });

  it("gives a job its own endpoint, key and model, and leaves the others on the narration's", () => {
    const configs = modelConfigsOf({
      ...installation,
      summaryModelBaseUrl: 'http://cheap.local/v1',
      summaryModelApiKey: 'cheap-key',
      summaryModelName: 'llama3.2:3b',
    });
    expect(configs.summary).toMatchObject({
      baseURL: 'http://cheap.local/v1',
      apiKey: 'cheap-key',
      model: 'llama3.2:3b',
      jobModel: 'llama3.2:3b',
    });
    expect(configs.memory).toMatchObject({
      baseURL: installation.modelBaseUrl,
      apiKey: 'main-key',
    });
    expect(configs.narration.jobModel).toBeUndefined();
  });

  it("never sends the narration's key to another endpoint", () => {
    const config = modelConfigOf(
      { ...installation, embeddingModelBaseUrl: 'http://elsewhere/v1' },
      'embedding',
    );
    expect(config.apiKey).toBeUndefined();
  });

  it('lets a job use its own key or model on the narration endpoint', () => {
    const config = modelConfigOf(
      { ...installation, memoryModelApiKey: 'memory-key', memoryModelName: 'gpt-4o-mini' },
      'memory',
    );
    expect(config).toMatchObject({
      baseURL: installation.modelBaseUrl,
      apiKey: 'memory-key',
      model: 'gpt-4o-mini',
    });
  });
});
