import type { Embedder } from './embedder';
import type { ModelClient, ModelConfig, PromptCacheKeyMode } from './model-client.types';
import { MODEL_DEFAULTS, sendsPromptCacheKey } from './model-client.types';
import { OfflineEmbedder } from './offline.embedder';
import { OfflineNarrator } from './offline.narrator';
import { OpenAiEmbedder } from './openai.embedder';
import { OpenAiModelClient } from './openai-model.client';

function hasKey(config: Pick<ModelConfig, 'apiKey'>): config is { apiKey: string } {
  return typeof config.apiKey === 'string' && config.apiKey.trim().length > 0;
}

/**
 * No API key → the offline narrator, so a fresh checkout plays out of the
 * box; otherwise any OpenAI-compatible server at `baseURL` (a local server
 * that ignores keys, such as Ollama, takes any non-empty key).
 */
export function createModelClient(config: ModelConfig): ModelClient {
  if (!hasKey(config)) return new OfflineNarrator();
  const baseURL = config.baseURL || MODEL_DEFAULTS.baseURL;
  return new OpenAiModelClient({
    baseURL,
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs || MODEL_DEFAULTS.timeoutMs,
    promptCacheKey: sendsPromptCacheKey(config.promptCacheKey, baseURL),
    cacheControl: config.cacheControl ?? false,
  });
}

/** No API key or no embedding model → the offline embedder. */
export function createEmbedder(config: ModelConfig): Embedder {
  if (!hasKey(config) || !config.embeddingModel) return new OfflineEmbedder();
  return new OpenAiEmbedder({
    baseURL: config.baseURL || MODEL_DEFAULTS.baseURL,
    apiKey: config.apiKey,
    model: config.embeddingModel,
    timeoutMs: MODEL_DEFAULTS.embeddingTimeoutMs,
  });
}

/** True when replies come from the built-in narrator (for labels in responses and logs). */
export function isOfflineConfig(config: Pick<ModelConfig, 'apiKey'>): boolean {
  return !hasKey(config);
}

/** The installation's model settings, as the validated configuration names them. */
export function modelConfigOf(config: {
  modelBaseUrl: string;
  modelApiKey?: string;
  modelName: string;
  embeddingModel: string;
  modelTimeoutMs: number;
  modelPromptCacheKey?: PromptCacheKeyMode;
  modelCacheControl?: boolean;
}): ModelConfig {
  return {
    baseURL: config.modelBaseUrl,
    apiKey: config.modelApiKey,
    model: config.modelName,
    embeddingModel: config.embeddingModel,
    timeoutMs: config.modelTimeoutMs,
    promptCacheKey: config.modelPromptCacheKey,
    cacheControl: config.modelCacheControl,
  };
}
