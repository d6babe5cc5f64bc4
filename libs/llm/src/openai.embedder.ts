import OpenAI from 'openai';

import type { Embedder, Embeddings } from './embedder';
import { toModelError, type ErrorContext } from './model.error';
import { MODEL_DEFAULTS } from './model-client.types';
import { boundedCall } from './openai-model.client';

export interface OpenAiEmbedderOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** asked of models that can shorten their vectors (text-embedding-3-*) */
  dimensions?: number;
  /** per request; default 60 s, the predecessor's */
  timeoutMs?: number;
  /** texts per request; default 32, the predecessor's batch */
  batchSize?: number;
}

/** Embeddings through the OpenAI-compatible `/embeddings` endpoint, in batches. */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions?: number;
  private readonly client: OpenAI;
  private readonly timeoutMs: number;
  private readonly batchSize: number;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.model = options.model;
    if (options.dimensions !== undefined) this.dimensions = options.dimensions;
    this.timeoutMs = options.timeoutMs ?? MODEL_DEFAULTS.embeddingTimeoutMs;
    this.batchSize = Math.max(1, options.batchSize ?? MODEL_DEFAULTS.embeddingBatchSize);
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      timeout: this.timeoutMs,
      maxRetries: 0,
      logLevel: 'off',
    });
  }

  async embed(texts: string[]): Promise<Embeddings> {
    const vectors: number[][] = [];
    let promptTokens = 0;
    let model = this.model;
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const batch = await this.embedBatch(texts.slice(start, start + this.batchSize));
      vectors.push(...batch.vectors);
      promptTokens += batch.promptTokens;
      model = batch.model;
    }
    return { vectors, usage: { promptTokens, completionTokens: 0, cachedTokens: 0 }, model };
  }

  private async embedBatch(
    batch: string[],
  ): Promise<{ vectors: number[][]; promptTokens: number; model: string }> {
    const ctx: ErrorContext = {
      model: this.model,
      operation: 'embeddings',
      baseURL: this.options.baseURL,
      timeoutMs: this.timeoutMs,
      apiKey: this.options.apiKey,
    };
    const call = boundedCall(this.timeoutMs);
    try {
      const response = await this.client.embeddings.create(
        {
          model: this.model,
          input: batch,
          // local servers (Ollama, llama.cpp) do not all speak the package's default base64
          encoding_format: 'float',
          ...(this.dimensions !== undefined && { dimensions: this.dimensions }),
        },
        { signal: call.signal },
      );
      call.readToEnd();
      const byIndex = [...response.data].sort((a, b) => a.index - b.index);
      if (byIndex.length !== batch.length) {
        throw toModelError(
          new OpenAI.APIError(
            502,
            { message: `asked for ${batch.length} embeddings, got ${byIndex.length}` },
            undefined,
            new Headers(),
          ),
          ctx,
        );
      }
      return {
        vectors: byIndex.map((item) => Array.from(item.embedding)),
        // A server that reports no usage is counted by its inputs' length: never free.
        promptTokens:
          response.usage?.prompt_tokens ??
          batch.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0),
        model: response.model || this.model,
      };
    } catch (error) {
      call.throwIfStopped(ctx);
      throw toModelError(error, ctx);
    } finally {
      call.release();
    }
  }
}
