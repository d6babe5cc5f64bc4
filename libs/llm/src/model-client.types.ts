// The one contract between Chronicle and a language model. The context worker
// and the memory worker only ever see these shapes, so the OpenAI-compatible
// client and the offline narrator are interchangeable behind them.

export type ApiMode = 'chat' | 'completion';

export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  /** prompt tokens the provider served from its prefix cache */
  cachedTokens: number;
}

export interface NarrationRequest {
  /** the static system block, byte-identical across turns */
  system: string;
  /** the story part of the prompt: history, live sections, reminder */
  story: string;
  mode: ApiMode;
  model: string;
  temperature: number;
  maxOutputTokens: number;
  /** 0 sends nothing, < 0 turns reasoning off, > 0 is a budget added on top of maxOutputTokens */
  reasoningMaxTokens: number;
  /**
   * Routes requests that share a prefix to the same cache (OpenAI's `prompt_cache_key`): the
   * adventure id. Sent only when the client's `promptCacheKey` option is on.
   */
  cacheKey?: string;
  /**
   * Character offset in `story` of the newest block start in the history, where an explicit
   * cache breakpoint goes (`cache_control`, when the client's option is on); null: none.
   */
  cacheBreakpoint?: number | null;
  /**
   * Chat mode: stretches of `story` sent as messages of their own role (depth-placed lore), in
   * order and not overlapping; the rest of the story is the user's. Absent: one user message.
   */
  storyRoles?: readonly { start: number; end: number; role: ChatRole }[];
}

export type ChatRole = 'system' | 'user' | 'assistant';

export type ModelStreamEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'done'; usage: ModelUsage; finishReason: string; model: string };

export interface CompletionRequest {
  system: string;
  user: string;
  model: string;
  temperature: number;
  maxTokens: number;
  /**
   * What the text is for. The OpenAI client ignores it; the offline narrator
   * uses it to keep within the word limit of each background prompt.
   */
  purpose?: 'memory' | 'summary' | 'other';
  /** As `NarrationRequest.cacheKey`. */
  cacheKey?: string;
  signal?: AbortSignal;
}

export interface CompletionResult {
  text: string;
  usage: ModelUsage;
  model: string;
  finishReason: string;
}

export interface ModelClient {
  /** The stream throws a `ModelError` on failure; the last event of a good stream is `done`. */
  streamNarration(req: NarrationRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent>;
  complete(req: CompletionRequest): Promise<CompletionResult>;
}

export interface ModelConfig {
  baseURL: string;
  /** empty or absent: the offline narrator and embedder answer instead */
  apiKey?: string;
  model: string;
  /**
   * The model a background job's operator named for it (SUMMARY_MODEL_NAME…): used for every
   * adventure, over the adventure's own. Absent: the adventure's model, else `model`.
   */
  jobModel?: string;
  /** empty or absent: the offline embedder's model */
  embeddingModel?: string;
  timeoutMs: number;
  /** Send `prompt_cache_key`: 'auto' (only to api.openai.com), 'true' or 'false'. */
  promptCacheKey?: PromptCacheKeyMode;
  /** Mark cache breakpoints with `cache_control` (providers that want explicit ones). */
  cacheControl?: boolean;
}

export type PromptCacheKeyMode = 'auto' | 'true' | 'false';

/** Whether `prompt_cache_key` goes to `baseURL`: on 'auto', only OpenAI's own API takes it. */
export function sendsPromptCacheKey(
  mode: PromptCacheKeyMode | undefined,
  baseURL: string,
): boolean {
  if (mode === 'true') return true;
  if (mode === 'false') return false;
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

/** The predecessor's defaults, kept so an adventure moved here plays with the same model settings. */
export const MODEL_DEFAULTS = {
  baseURL: 'http://localhost:11434/v1',
  mode: 'chat' as ApiMode,
  temperature: 0.8,
  maxOutputTokens: 800,
  reasoningMaxTokens: 0,
  contextTokenBudget: 16384,
  timeoutMs: 120_000,
  connectTimeoutMs: 10_000,
  embeddingTimeoutMs: 60_000,
  embeddingBatchSize: 32,
  backgroundTemperature: 0.3,
  backgroundMaxTokens: 400,
  summaryMaxTokens: 600,
} as const;
