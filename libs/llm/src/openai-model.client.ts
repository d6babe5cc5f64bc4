import OpenAI from 'openai';

import { ModelError, cutError, timeoutError, toModelError, type ErrorContext } from './model.error';
import type {
  CompletionRequest,
  CompletionResult,
  ModelClient,
  ModelStreamEvent,
  ModelUsage,
  NarrationRequest,
} from './model-client.types';
import { completionPrompt, storyMessages, type StoryMessage } from './narration.prompt';

export interface OpenAiModelClientOptions {
  baseURL: string;
  apiKey: string;
  /** bound on the whole request, stream included (the openai package only bounds the wait for headers) */
  timeoutMs: number;
  /** send the request's `cacheKey` as `prompt_cache_key` */
  promptCacheKey?: boolean;
  /** mark the system block's end and the history's block start with `cache_control` */
  cacheControl?: boolean;
}

/** Anthropic's breakpoint (through OpenRouter): the prefix up to here is cached for a while. */
const EPHEMERAL = { type: 'ephemeral' } as const;

/** The loose shape shared by chat and completion chunks across OpenAI-compatible servers. */
interface LooseChoice {
  delta?: { content?: string | null; reasoning?: string | null; reasoning_content?: string | null };
  message?: {
    content?: string | null;
    reasoning?: string | null;
    reasoning_content?: string | null;
  };
  text?: string | null;
  reasoning?: string | null;
  reasoning_content?: string | null;
  finish_reason?: string | null;
}

interface LooseUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

interface LooseChunk {
  model?: string;
  choices?: LooseChoice[] | null;
  usage?: LooseUsage | null;
}

export function usageFrom(raw: LooseUsage | null | undefined): ModelUsage | undefined {
  if (!raw) return undefined;
  const usage = {
    promptTokens: raw.prompt_tokens ?? 0,
    completionTokens: raw.completion_tokens ?? 0,
    cachedTokens: raw.prompt_tokens_details?.cached_tokens ?? 0,
  };
  // some servers send an empty usage object after the real one: it must not erase it
  return usage.promptTokens > 0 || usage.completionTokens > 0 ? usage : undefined;
}

const NO_USAGE: ModelUsage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0 };

function textOf(choice: LooseChoice): string {
  return choice.delta?.content ?? choice.text ?? choice.message?.content ?? '';
}

function reasoningOf(choice: LooseChoice): string {
  const from = choice.delta ?? choice.message ?? choice;
  return (
    from.reasoning ?? from.reasoning_content ?? choice.reasoning ?? choice.reasoning_content ?? ''
  );
}

/**
 * As the predecessor sent it, so a setting means the same here: > 0 sends the budget and adds it
 * to max_tokens (reasoning must not eat the story's tokens); < 0 turns reasoning off; 0 sends
 * nothing (for models that reject the parameter).
 */
export function reasoningParams(
  maxOutputTokens: number,
  reasoningMaxTokens: number,
): { max_tokens: number; reasoning?: { max_tokens: number } | { effort: 'none' } } {
  if (reasoningMaxTokens > 0) {
    return {
      max_tokens: maxOutputTokens + reasoningMaxTokens,
      reasoning: { max_tokens: reasoningMaxTokens },
    };
  }
  if (reasoningMaxTokens < 0) return { max_tokens: maxOutputTokens, reasoning: { effort: 'none' } };
  return { max_tokens: maxOutputTokens };
}

/**
 * OpenRouter spreads a model over upstreams with separate caches; pinning
 * deepseek models to deepseek's own upstream keeps the prompt cache warm.
 * Fallbacks stay allowed so an outage there does not fail the turn.
 */
function providerPreference(baseURL: string, model: string): Record<string, unknown> {
  if (/openrouter\.ai/i.test(baseURL) && /deepseek/i.test(model)) {
    return { provider: { order: ['deepseek'], allow_fallbacks: true } };
  }
  return {};
}

/**
 * The model client on the official `openai` package, for any OpenAI-compatible
 * server (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp). Retries are off here:
 * they belong to the job queue, which knows about backoff and Retry-After.
 */
export class OpenAiModelClient implements ModelClient {
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiModelClientOptions) {
    this.client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      timeout: options.timeoutMs,
      maxRetries: 0,
      // the package's own log lines could carry request details; ours are scrubbed
      logLevel: 'off',
    });
  }

  async *streamNarration(
    req: NarrationRequest,
    signal?: AbortSignal,
  ): AsyncIterable<ModelStreamEvent> {
    const ctx = this.context(req.model, 'narration');
    const call = this.bounded(signal);
    let streaming = false;
    try {
      const common = {
        model: req.model,
        temperature: req.temperature,
        stream: true,
        stream_options: { include_usage: true },
        ...reasoningParams(req.maxOutputTokens, req.reasoningMaxTokens),
        ...providerPreference(this.options.baseURL, req.model),
        ...this.cacheKeyParam(req.cacheKey),
      };
      const stream: AsyncIterable<LooseChunk> =
        req.mode === 'chat'
          ? await this.client.chat.completions.create(
              {
                ...common,
                messages: this.options.cacheControl
                  ? withBreakpoints(req.system, storyMessages(req), req.cacheBreakpoint ?? null)
                  : narrationMessages(req.system, storyMessages(req)),
              } as OpenAI.ChatCompletionCreateParamsStreaming,
              { signal: call.signal },
            )
          : await this.client.completions.create(
              {
                ...common,
                prompt: completionPrompt(req),
              } as OpenAI.CompletionCreateParamsStreaming,
              { signal: call.signal },
            );
      streaming = true;

      let usage: ModelUsage | undefined;
      let finishReason: string | undefined;
      let model = req.model;
      let received = 0;
      for await (const chunk of stream) {
        if (chunk.model) model = chunk.model;
        usage = usageFrom(chunk.usage) ?? usage;
        for (const choice of chunk.choices ?? []) {
          const reasoning = reasoningOf(choice);
          if (reasoning) yield { type: 'reasoning', text: reasoning };
          const text = textOf(choice);
          if (text) {
            received += text.length;
            yield { type: 'text', text };
          }
          if (choice.finish_reason) finishReason = choice.finish_reason;
        }
      }
      call.readToEnd();
      // the package ends an aborted stream quietly; say why it ended
      call.throwIfStopped(ctx);
      if (!finishReason) throw cutError(ctx, `${received} characters received, no finish reason`);
      yield { type: 'done', usage: usage ?? NO_USAGE, finishReason, model };
    } catch (error) {
      call.throwIfStopped(ctx);
      if (streaming && !(error instanceof ModelError) && !(error instanceof OpenAI.APIError)) {
        // the socket closed under the body ("terminated"): the reply was cut mid-way
        throw cutError(ctx, 'the stream broke off');
      }
      throw toModelError(error, ctx);
    } finally {
      call.release();
    }
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const ctx = this.context(req.model, 'completion');
    const call = this.bounded(req.signal);
    try {
      const response = await this.client.chat.completions.create(
        {
          model: req.model,
          temperature: req.temperature,
          max_tokens: req.maxTokens,
          messages: toMessages({ system: req.system, user: req.user }),
          ...providerPreference(this.options.baseURL, req.model),
          ...this.cacheKeyParam(req.cacheKey),
        } as OpenAI.ChatCompletionCreateParamsNonStreaming,
        { signal: call.signal },
      );
      call.readToEnd();
      const choice = (response.choices?.[0] ?? {}) as LooseChoice;
      return {
        text: textOf(choice),
        usage: usageFrom(response.usage as LooseUsage) ?? NO_USAGE,
        model: response.model || req.model,
        finishReason: choice.finish_reason ?? 'stop',
      };
    } catch (error) {
      call.throwIfStopped(ctx);
      throw toModelError(error, ctx);
    } finally {
      call.release();
    }
  }

  private cacheKeyParam(key: string | undefined): { prompt_cache_key?: string } {
    return this.options.promptCacheKey && key ? { prompt_cache_key: key } : {};
  }

  private context(model: string, operation: string): ErrorContext {
    return {
      model,
      operation,
      baseURL: this.options.baseURL,
      timeoutMs: this.options.timeoutMs,
      apiKey: this.options.apiKey,
    };
  }

  /** One abort signal for the caller's cancel and our whole-request timeout, remembering which fired. */
  private bounded(signal?: AbortSignal) {
    return boundedCall(this.options.timeoutMs, signal);
  }
}

export function toMessages(messages: {
  system?: string;
  user: string;
}): OpenAI.ChatCompletionMessageParam[] {
  const out: OpenAI.ChatCompletionMessageParam[] = [];
  if (messages.system) out.push({ role: 'system', content: messages.system });
  out.push({ role: 'user', content: messages.user });
  return out;
}

/** A narration's chat messages: the system block (when there is one), then the story's. */
export function narrationMessages(
  system: string,
  story: readonly StoryMessage[],
): OpenAI.ChatCompletionMessageParam[] {
  const out: OpenAI.ChatCompletionMessageParam[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const message of story) {
    out.push({ role: message.role, content: message.text } as OpenAI.ChatCompletionMessageParam);
  }
  return out;
}

/**
 * Chat messages with explicit cache breakpoints: one at the end of the system block (the prefix
 * every turn of every adventure with this system text repeats) and one at the newest block start
 * of the history (the prefix every turn repeats until the window's start moves), in the story
 * message that holds it. The texts are split into content parts and not changed: their
 * concatenation is the same prompt.
 */
export function withBreakpoints(
  system: string,
  story: readonly StoryMessage[],
  storyBreakpoint: number | null,
): OpenAI.ChatCompletionMessageParam[] {
  const out: OpenAI.ChatCompletionMessageParam[] = [];
  if (system) {
    // `cache_control` is not in the openai package's types: OpenRouter passes it to Anthropic.
    const content = [{ type: 'text', text: system, cache_control: EPHEMERAL }];
    out.push({ role: 'system', content } as unknown as OpenAI.ChatCompletionSystemMessageParam);
  }
  for (const message of story) {
    const at = (storyBreakpoint ?? 0) - message.start;
    const parts =
      at > 0 && at < message.text.length
        ? [
            { type: 'text', text: message.text.slice(0, at), cache_control: EPHEMERAL },
            { type: 'text', text: message.text.slice(at) },
          ]
        : [{ type: 'text', text: message.text }];
    out.push({
      role: message.role,
      content: parts,
    } as unknown as OpenAI.ChatCompletionMessageParam);
  }
  return out;
}

export interface BoundedCall {
  signal: AbortSignal;
  throwIfStopped(ctx: ErrorContext): void;
  /** The response has been read to its end: `release` has no connection left to close. */
  readToEnd(): void;
  release(): void;
}

/** Why a call left unfinished is aborted (`release`): nothing reads it after that. */
const RELEASED = new Error('the model call was released');

export function boundedCall(timeoutMs: number, signal?: AbortSignal): BoundedCall {
  const controller = new AbortController();
  let timedOut = false;
  let readToEnd = false;
  const cancel = () => controller.abort();
  if (signal?.aborted) controller.abort();
  else signal?.addEventListener('abort', cancel, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  return {
    signal: controller.signal,
    throwIfStopped(ctx) {
      if (timedOut) throw timeoutError(ctx);
      if (controller.signal.aborted) {
        throw new ModelError({
          kind: 'cancelled',
          retryable: false,
          message: `The ${ctx.operation} request was cancelled.`,
        });
      }
    },
    readToEnd() {
      readToEnd = true;
    },
    release() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      // A consumer that stopped reading early must not leave the HTTP stream open. A response read
      // to its end has nothing open, and its abort was the dearest part of a turn's call: the SDK
      // aborts its own controller in turn, and each abort builds a DOMException, stack and all.
      if (!readToEnd) controller.abort(RELEASED);
    },
  };
}
