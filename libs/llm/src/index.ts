export * from './model-client.types';
export {
  MODEL_ERROR_CODES,
  ModelError,
  isModelError,
  modelErrorCode,
  parseRetryAfter,
  scrubSecret,
  type ModelErrorInit,
  type ModelErrorKind,
} from './model.error';
export {
  CONTINUE_INSTRUCTION,
  chatMessages,
  completionPrompt,
  storyMessages,
  type StoryMessage,
} from './narration.prompt';
export {
  OpenAiModelClient,
  reasoningParams,
  type OpenAiModelClientOptions,
} from './openai-model.client';
export { OFFLINE_MODEL, OfflineNarrator, knownEntities, offlineReply } from './offline.narrator';
export { cosineSimilarity, type Embedder, type Embeddings } from './embedder';
export { OpenAiEmbedder, type OpenAiEmbedderOptions } from './openai.embedder';
export { OFFLINE_EMBEDDING_MODEL, OfflineEmbedder, offlineEmbedding } from './offline.embedder';
export {
  createEmbedder,
  createModelClient,
  isOfflineConfig,
  modelConfigOf,
  modelConfigsOf,
  MODEL_JOBS,
  type ModelJob,
  type ModelSettings,
} from './model-client.factory';
export { FREE_MODELS } from './free-models';
export { extractiveSummary } from './offline.extractive';
