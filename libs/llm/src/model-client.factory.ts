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

/** The jobs that call a model, each of which an operator may point at its own endpoint. */
export const MODEL_JOBS = ['narration', 'memory', 'summary', 'embedding', 'moderation'] as const;
export type ModelJob = (typeof MODEL_JOBS)[number];

/** The validated configuration's model variables (libs/platform's AppConfig holds them). */
export interface ModelSettings {
  modelBaseUrl: string;
  modelApiKey?: string;
  modelName: string;
  embeddingModel: string;
  modelTimeoutMs: number;
  modelPromptCacheKey?: PromptCacheKeyMode;
  modelCacheControl?: boolean;
  memoryModelBaseUrl?: string;
  memoryModelApiKey?: string;
  memoryModelName?: string;
  summaryModelBaseUrl?: string;
  summaryModelApiKey?: string;
  summaryModelName?: string;
  embeddingModelBaseUrl?: string;
  embeddingModelApiKey?: string;
  moderationModelBaseUrl?: string;
  moderationModelApiKey?: string;
  moderationModelName?: string;
}

function ownSettings(
  config: ModelSettings,
  job: ModelJob,
): { baseUrl?: string; apiKey?: string; name?: string } {
  switch (job) {
    case 'narration':
      return {};
    case 'memory':
      return {
        baseUrl: config.memoryModelBaseUrl,
        apiKey: config.memoryModelApiKey,
        name: config.memoryModelName,
      };
    case 'summary':
      return {
        baseUrl: config.summaryModelBaseUrl,
        apiKey: config.summaryModelApiKey,
        name: config.summaryModelName,
      };
    case 'embedding':
      return { baseUrl: config.embeddingModelBaseUrl, apiKey: config.embeddingModelApiKey };
    case 'moderation':
      return {
        baseUrl: config.moderationModelBaseUrl,
        apiKey: config.moderationModelApiKey,
        name: config.moderationModelName,
      };
  }
}

/**
 * One job's model settings: its own endpoint, key and model where the operator set them, the
 * narration's otherwise. The narration's key goes only to the narration's endpoint (the
 * configuration refuses a job endpoint of its own without a key of its own), so pointing
 * summaries at a cheap provider never hands it the main provider's key.
 */
export function modelConfigOf(config: ModelSettings, job: ModelJob = 'narration'): ModelConfig {
  const own = ownSettings(config, job);
  const baseURL = own.baseUrl ?? config.modelBaseUrl;
  const sameEndpoint = baseURL === config.modelBaseUrl;
  return {
    baseURL,
    apiKey: own.apiKey ?? (sameEndpoint ? config.modelApiKey : undefined),
    model: own.name ?? config.modelName,
    ...(own.name !== undefined && { jobModel: own.name }),
    embeddingModel: config.embeddingModel,
    timeoutMs: config.modelTimeoutMs,
    promptCacheKey: config.modelPromptCacheKey,
    cacheControl: config.modelCacheControl,
  };
}

/** Every job's settings (see `modelConfigOf`). */
export function modelConfigsOf(config: ModelSettings): Record<ModelJob, ModelConfig> {
  return Object.fromEntries(MODEL_JOBS.map((job) => [job, modelConfigOf(config, job)])) as Record<
    ModelJob,
    ModelConfig
  >;
}
