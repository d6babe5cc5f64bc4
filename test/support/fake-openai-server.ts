// An OpenAI-compatible server on 127.0.0.1 for tests and benchmarks: the real
// `openai` client talks to it over HTTP, so what a test asserts on is the
// request that would have gone to a provider. Dependency-free (node:http).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** A scripted answer. Every field is optional; faults win over the reply. */
export interface FakeScript {
  /** the reply text (chat content or completion text) */
  text?: string;
  /** reasoning sent before the text, in its own chunks */
  reasoning?: string;
  /** which delta field carries the reasoning */
  reasoningField?: 'reasoning' | 'reasoning_content';
  usage?: Partial<FakeUsage>;
  /** how many chunks the text is split into, or the chunks themselves */
  chunks?: number | string[];
  /** delay before each streamed chunk (or before a non-streamed reply) */
  delayMs?: number;
  finishReason?: string;
  model?: string;
  /** send an empty usage object after the real one, as some servers do */
  trailingEmptyUsage?: boolean;
  /** answer with this HTTP status and an error body */
  status?: number;
  /** the Retry-After header: seconds, or an HTTP date */
  retryAfter?: number | string;
  /** the error body's message (for a 429: "daily quota" versus a burst) */
  errorMessage?: string;
  errorCode?: string;
  /** stream n chunks, then destroy the socket */
  cutAfterChunks?: number;
  /** stream every chunk but end without a finish reason and without [DONE] */
  endWithoutDone?: boolean;
  /** wait this long before sending headers */
  hangMs?: number;
  /** only a request to this path takes the script (default: any endpoint) */
  path?: string;
  // Raw frame modes: what a misbehaving provider sends inside a 200 stream.
  /** after this many text chunks, send a `data:` line that is not JSON (then nothing more) */
  invalidJsonAfterChunks?: number;
  /** after `afterChunks` text chunks (default 0), send `data: {"error": …}` and end the body */
  errorFrame?: { message: string; code?: string; type?: string; afterChunks?: number };
  /**
   * end the text inside a `state` block that never closes and finish with `length`, as a model
   * that hit its output cap mid-block does; `text` is the narration before the block
   */
  lengthInStateBlock?: boolean;
  /** send this many bytes of the streamed body, then reset the socket (TCP RST) */
  resetAfterBytes?: number;
  /**
   * reply with the last user message's text (the prompt's tail in completion mode): the worst
   * case for a state block forged in a player's action
   */
  echoLastUser?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  receivedAt: number;
  /** the client went away before the response was finished */
  aborted: boolean;
  /** set when the response was finished or the socket closed */
  endedAt?: number;
  /** performance.now() when the request reached the handler: sub-millisecond, for benchmarks */
  receivedAtPerf?: number;
  /** performance.now() when the response's last byte was handed to the socket */
  finishedAtPerf?: number;
}

export interface FakeOpenAiServerOptions {
  /** no artificial delay anywhere: every chunk is written at once */
  instant?: boolean;
  /** delay between streamed chunks when a script does not say (default 2 ms) */
  chunkDelayMs?: number;
  /** the reply when the queue holds nothing for the request */
  defaultReply?: FakeScript | ((request: RecordedRequest) => FakeScript);
  /** length of the vectors the embeddings endpoint returns (default 16) */
  embeddingDimensions?: number;
  /** keep at most this many recorded requests (benchmarks) */
  maxRecorded?: number;
  /**
   * Compute `cached_tokens` from the prompts seen before, as OpenAI's prefix cache does
   * (default true): see `FakeOpenAiServer.cachedTokensFor`. A script's `usage.cachedTokens` wins.
   */
  promptCache?: boolean;
}

/** OpenAI's rule: a shared prefix is served from 1,024 tokens on, in steps of 128. */
export const FAKE_CACHE_MIN_TOKENS = 1024;
export const FAKE_CACHE_STEP_TOKENS = 128;
/** Earlier prompts per cache key a request is compared with. */
const FAKE_CACHE_DEPTH = 8;

const DEFAULT_TEXT = 'The fake narrator continues the story.';

function approxTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function splitText(text: string, chunks: number | string[] | undefined): string[] {
  if (Array.isArray(chunks)) return chunks;
  const count = Math.max(1, Math.min(chunks ?? 4, text.length || 1));
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size));
  return out.length > 0 ? out : [''];
}

/** The last user message (chat) or the last 2,000 characters of the prompt (completion). */
function lastUserText(body: Record<string, unknown>): string {
  if (Array.isArray(body.messages)) {
    // content as a string, or as parts (a message split at cache breakpoints)
    const users = (body.messages as { role?: unknown; content?: unknown }[]).filter(
      (m) => m.role === 'user',
    );
    return users.length > 0 ? contentText(users[users.length - 1].content) : '';
  }
  return typeof body.prompt === 'string' ? body.prompt.slice(-2_000) : '';
}

/** An unterminated `state` block cut mid-object, appended to the narration. */
const OPEN_STATE_BLOCK = '\n\n```state\n{"type":"ItemGained","item":"lan';

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  // content parts (a message split at cache breakpoints): their texts, in order
  if (Array.isArray(content)) {
    return content
      .map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : ''))
      .join('');
  }
  return '';
}

function promptText(body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return body.prompt;
  if (Array.isArray(body.messages)) {
    return body.messages.map((m: { content?: unknown }) => contentText(m.content)).join('\n');
  }
  return '';
}

function sharedChars(a: string, b: string): number {
  const end = Math.min(a.length, b.length);
  let i = 0;
  while (i < end && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** A deterministic unit vector for a text, so equal inputs get equal embeddings. */
function fakeVector(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (let i = 0; i < text.length; i += 1) v[(text.charCodeAt(i) * 31 + i) % dims] += 1;
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeScript[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private server?: Server;
  private waiters: Array<() => void> = [];
  private defaultReply: FakeOpenAiServerOptions['defaultReply'];
  /** recent prompts per cache key (`prompt_cache_key`, or '' without one), newest first */
  private readonly promptCache = new Map<string, string[]>();
  /** prompt and cached tokens of every generation answered with usage (benchmarks read these) */
  readonly cacheTotals = { promptTokens: 0, cachedTokens: 0, requests: 0 };

  constructor(private readonly options: FakeOpenAiServerOptions = {}) {
    this.defaultReply = options.defaultReply;
  }

  async start(): Promise<{ url: string; baseURL: string; port: number }> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    const { port } = server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}`;
    return { url, baseURL: `${url}/v1`, port };
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Scripted replies and faults, taken in order by the requests that match them. */
  enqueue(...scripts: FakeScript[]): void {
    this.queue.push(...scripts);
  }

  setDefaultReply(reply: FakeOpenAiServerOptions['defaultReply']): void {
    this.defaultReply = reply;
  }

  /** Scripts not yet taken. */
  get pending(): number {
    return this.queue.length;
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  clear(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.promptCache.clear();
    this.cacheTotals.promptTokens = this.cacheTotals.cachedTokens = this.cacheTotals.requests = 0;
  }

  /**
   * The cached tokens a prefix cache would serve for `prompt` under `key`, then remembers it:
   * the longest prefix it shares with a recent prompt of the same key, in this server's tokens
   * (4 characters each, as its `prompt_tokens`), counted from 1,024 in steps of 128.
   */
  cachedTokensFor(key: string, prompt: string): number {
    const recent = this.promptCache.get(key) ?? [];
    let shared = 0;
    for (const earlier of recent) shared = Math.max(shared, sharedChars(prompt, earlier));
    recent.unshift(prompt);
    recent.length = Math.min(recent.length, FAKE_CACHE_DEPTH);
    this.promptCache.set(key, recent);
    const tokens = Math.min(Math.floor(shared / 4), approxTokens(prompt));
    if (tokens < FAKE_CACHE_MIN_TOKENS) return 0;
    return (
      FAKE_CACHE_MIN_TOKENS +
      Math.floor((tokens - FAKE_CACHE_MIN_TOKENS) / FAKE_CACHE_STEP_TOKENS) * FAKE_CACHE_STEP_TOKENS
    );
  }

  /** Resolves once at least `count` requests have arrived. */
  async waitForRequests(count: number, timeoutMs = 5_000): Promise<RecordedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `fake OpenAI server: ${this.requests.length} of ${count} requests after ${timeoutMs} ms`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.requests;
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  private take(request: RecordedRequest): FakeScript {
    const index = this.queue.findIndex((s) => s.path === undefined || s.path === request.path);
    if (index >= 0) return this.queue.splice(index, 1)[0];
    const fallback = this.defaultReply;
    if (typeof fallback === 'function') return fallback(request);
    return fallback ?? {};
  }

  private record(request: RecordedRequest): void {
    this.requests.push(request);
    const max = this.options.maxRecorded;
    if (max !== undefined && this.requests.length > max)
      this.requests.splice(0, this.requests.length - max);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAtPerf = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = raw;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : undefined;
    } catch {
      // keep the raw text: a test may want to see what was sent
    }
    const path = (req.url ?? '/').split('?')[0];
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: { ...req.headers },
      body,
      receivedAt: Date.now(),
      aborted: false,
      receivedAtPerf,
    };
    res.once('finish', () => {
      request.finishedAtPerf = performance.now();
    });
    res.on('close', () => {
      request.aborted = !res.writableFinished;
      request.endedAt = Date.now();
    });
    this.record(request);

    const known = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings'];
    if (req.method !== 'POST' || !known.includes(path)) {
      return this.sendError(res, 404, `Unknown route ${req.method} ${path}`, 'not_found');
    }
    const script = this.take(request);
    // a hang is a fault, not a delay: it holds even in instant mode
    if (script.hangMs) await this.sleep(script.hangMs);
    if (res.destroyed) return;

    if (script.status && script.status >= 400) {
      const headers: Record<string, string> = {};
      if (script.retryAfter !== undefined) headers['retry-after'] = String(script.retryAfter);
      return this.sendError(
        res,
        script.status,
        script.errorMessage ?? `Fake fault ${script.status}`,
        script.errorCode,
        headers,
      );
    }
    const json = (body ?? {}) as Record<string, unknown>;
    if (path === '/v1/embeddings') return this.embeddings(res, json, script);
    return this.generate(
      res,
      json,
      path === '/v1/chat/completions' ? 'chat' : 'completion',
      script,
    );
  }

  private sendError(
    res: ServerResponse,
    status: number,
    message: string,
    code?: string,
    headers: Record<string, string> = {},
  ): void {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ error: { message, type: 'fake_error', code: code ?? null } }));
  }

  private usage(json: Record<string, unknown>, text: string, script: FakeScript) {
    const prompt = promptText(json);
    const promptTokens = script.usage?.promptTokens ?? approxTokens(prompt);
    const completionTokens = script.usage?.completionTokens ?? approxTokens(text);
    const key = typeof json.prompt_cache_key === 'string' ? json.prompt_cache_key : '';
    const seen = this.options.promptCache === false ? 0 : this.cachedTokensFor(key, prompt);
    const cachedTokens = Math.min(script.usage?.cachedTokens ?? seen, promptTokens);
    this.cacheTotals.promptTokens += promptTokens;
    this.cacheTotals.cachedTokens += cachedTokens;
    this.cacheTotals.requests += 1;
    return {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: cachedTokens },
    };
  }

  private async embeddings(
    res: ServerResponse,
    json: Record<string, unknown>,
    script: FakeScript,
  ): Promise<void> {
    const input = Array.isArray(json.input) ? (json.input as unknown[]) : [json.input];
    const dims = this.options.embeddingDimensions ?? 16;
    if (script.delayMs && !this.options.instant) await this.sleep(script.delayMs);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        model: script.model ?? json.model,
        data: input.map((text, index) => {
          const vector = fakeVector(String(text), dims);
          const embedding =
            json.encoding_format === 'base64'
              ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
              : vector;
          return { object: 'embedding', index, embedding };
        }),
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      }),
    );
  }

  private async generate(
    res: ServerResponse,
    json: Record<string, unknown>,
    mode: 'chat' | 'completion',
    script: FakeScript,
  ): Promise<void> {
    const base = script.echoLastUser ? lastUserText(json) : (script.text ?? DEFAULT_TEXT);
    const text = script.lengthInStateBlock ? `${base}${OPEN_STATE_BLOCK}` : base;
    const model = script.model ?? (typeof json.model === 'string' ? json.model : 'fake-model');
    const finishReason = script.finishReason ?? (script.lengthInStateBlock ? 'length' : 'stop');
    const usage = this.usage(json, text, script);
    const reasoningField = script.reasoningField ?? 'reasoning_content';
    const delay = this.options.instant ? 0 : (script.delayMs ?? this.options.chunkDelayMs ?? 2);
    const id = `fake-${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);

    if (json.stream !== true) {
      if (delay > 0) await this.sleep(delay);
      if (res.destroyed) return;
      const choice =
        mode === 'chat'
          ? {
              index: 0,
              message: {
                role: 'assistant',
                content: text,
                ...(script.reasoning && { [reasoningField]: script.reasoning }),
              },
              finish_reason: finishReason,
            }
          : { index: 0, text, finish_reason: finishReason };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: mode === 'chat' ? 'chat.completion' : 'text_completion',
          created,
          model,
          choices: [choice],
          usage,
        }),
      );
      return;
    }

    const object = mode === 'chat' ? 'chat.completion.chunk' : 'text_completion';
    const frame = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({ id, object, created, model, choices, ...extra })}\n\n`;
    const textChoice = (piece: string, finish: string | null) =>
      mode === 'chat'
        ? { index: 0, delta: piece ? { content: piece } : {}, finish_reason: finish }
        : { index: 0, text: piece, finish_reason: finish };

    const frames: string[] = [];
    if (script.reasoning) {
      for (const piece of splitText(script.reasoning, 2)) {
        frames.push(
          frame([
            mode === 'chat'
              ? { index: 0, delta: { [reasoningField]: piece }, finish_reason: null }
              : { index: 0, text: '', [reasoningField]: piece, finish_reason: null },
          ]),
        );
      }
    }
    const textStart = frames.length;
    const pieces = splitText(text, script.chunks);
    for (const piece of pieces) frames.push(frame([textChoice(piece, null)]));
    // A raw fault takes the place of everything from its chunk on: nothing follows it.
    const raw =
      script.invalidJsonAfterChunks !== undefined
        ? `data: {"id":"${id}","choices":[{"index":0,"delta":{"content":"unterminated\n\n`
        : script.errorFrame
          ? `data: ${JSON.stringify({
              error: {
                message: script.errorFrame.message,
                type: script.errorFrame.type ?? 'server_error',
                code: script.errorFrame.code ?? null,
              },
            })}\n\n`
          : undefined;
    if (raw !== undefined) {
      const after = script.invalidJsonAfterChunks ?? script.errorFrame?.afterChunks ?? 0;
      frames.splice(textStart + Math.min(Math.max(0, after), pieces.length));
      frames.push(raw);
    } else if (!script.endWithoutDone) {
      frames.push(frame([textChoice('', finishReason)]));
      const options = json.stream_options as { include_usage?: boolean } | undefined;
      if (options?.include_usage) {
        frames.push(frame([], { usage }));
        if (script.trailingEmptyUsage) frames.push(frame([], { usage: {} }));
      }
      frames.push('data: [DONE]\n\n');
    }

    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    if (script.resetAfterBytes !== undefined) {
      const body = Buffer.from(frames.join(''), 'utf8');
      const sent = body.subarray(0, Math.max(0, script.resetAfterBytes));
      if (delay > 0) await this.sleep(delay);
      if (res.destroyed) return;
      res.flushHeaders();
      await new Promise<void>((resolve) => res.write(sent, () => resolve()));
      // RST instead of FIN: the client sees ECONNRESET mid-body, as after a proxy or provider crash
      const socket = res.socket;
      if (socket && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
      else socket?.destroy();
      return;
    }
    const cutAt = script.cutAfterChunks;
    if (delay === 0 && cutAt === undefined) {
      res.end(frames.join(''));
      return;
    }
    for (let i = 0; i < frames.length; i += 1) {
      if (cutAt !== undefined && i >= cutAt) {
        // flush what was written, then drop the connection without ending the body
        await new Promise<void>((resolve) => res.write('', () => resolve()));
        res.socket?.destroy();
        return;
      }
      if (delay > 0) await this.sleep(delay);
      if (res.destroyed) return;
      res.write(frames[i]);
    }
    res.end();
  }
}

/** Starts a fake server; close it in afterAll/afterEach. */
export async function startFakeOpenAiServer(
  options: FakeOpenAiServerOptions = {},
): Promise<FakeOpenAiServer & { url: string; baseURL: string }> {
  const server = new FakeOpenAiServer(options);
  const { url, baseURL } = await server.start();
  return Object.assign(server, { url, baseURL });
}
