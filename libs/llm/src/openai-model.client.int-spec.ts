import { createServer } from 'node:net';

import { FakeOpenAiServer } from '../../../test/support/fake-openai-server';
import { ModelError } from './model.error';
import type { ModelStreamEvent, NarrationRequest } from './model-client.types';
import { CONTINUE_INSTRUCTION } from './narration.prompt';
import { OpenAiModelClient } from './openai-model.client';

const API_KEY = 'sk-test-SECRETKEY0123456789abcdef';

function narration(overrides: Partial<NarrationRequest> = {}): NarrationRequest {
  return {
    system: 'You are a masterful storyteller.',
    story: 'The harbor is quiet.\n\n> You look for Mira.',
    mode: 'chat',
    model: 'test-model',
    temperature: 0.8,
    maxOutputTokens: 800,
    reasoningMaxTokens: 0,
    ...overrides,
  };
}

async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function failure(run: () => Promise<unknown>): Promise<ModelError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    const modelError = error as ModelError;
    // the key never leaves in any form: message, fields or serialisation
    expect(JSON.stringify(modelError)).not.toContain(API_KEY);
    expect(modelError.message).not.toContain(API_KEY);
    expect(modelError.message).not.toContain(API_KEY.slice(0, 8));
    expect(String(modelError.stack)).not.toContain(API_KEY);
    return modelError;
  }
  throw new Error('expected a ModelError');
}

/** A port that nothing listens on: bind one, read its number, close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('OpenAiModelClient against an OpenAI-compatible server', () => {
  const server = new FakeOpenAiServer();
  let client: OpenAiModelClient;
  let baseURL: string;

  beforeAll(async () => {
    ({ baseURL } = await server.start());
    client = new OpenAiModelClient({ baseURL, apiKey: API_KEY, timeoutMs: 5_000 });
  });
  afterEach(() => server.clear());
  afterAll(() => server.close());

  it('streams reasoning and text as separate events and ends with usage including cached tokens', async () => {
    server.enqueue({
      text: 'Mira steps out of the fog.',
      reasoning: 'She should appear now.',
      chunks: 3,
      usage: { promptTokens: 120, completionTokens: 9, cachedTokens: 96 },
      trailingEmptyUsage: true,
    });

    const events = await collect(client.streamNarration(narration()));

    const text = events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text);
    const reasoning = events
      .filter((e) => e.type === 'reasoning')
      .map((e) => (e as { text: string }).text);
    expect(text.join('')).toBe('Mira steps out of the fog.');
    expect(text.length).toBe(3);
    expect(reasoning.join('')).toBe('She should appear now.');
    expect(events.findIndex((e) => e.type === 'reasoning')).toBeLessThan(
      events.findIndex((e) => e.type === 'text'),
    );
    expect(events[events.length - 1]).toEqual({
      type: 'done',
      usage: { promptTokens: 120, completionTokens: 9, cachedTokens: 96 },
      finishReason: 'stop',
      model: 'test-model',
    });
  });

  it('passes reasoning through from a delta.reasoning field too', async () => {
    server.enqueue({ text: 'Go on.', reasoning: 'thinking', reasoningField: 'reasoning' });
    const events = await collect(client.streamNarration(narration()));
    expect(
      events
        .filter((e) => e.type === 'reasoning')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('thinking');
  });

  it('sends chat mode as a system message and the story plus the bracketed instruction, asking for usage', async () => {
    server.enqueue({ text: 'ok' });
    const req = narration({ temperature: 0.5, maxOutputTokens: 300 });
    await collect(client.streamNarration(req));

    const [request] = server.requestsTo('/v1/chat/completions');
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.body).toEqual({
      model: 'test-model',
      temperature: 0.5,
      max_tokens: 300,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: `${req.story}\n\n${CONTINUE_INSTRUCTION}` },
      ],
    });
    expect(CONTINUE_INSTRUCTION).toMatch(/^\[.*continue the story.*only.*story text.*\]$/i);
  });

  it("sends depth-placed lore as messages of their own role, the story's other text as the user's", async () => {
    server.enqueue({ text: 'ok' });
    const story = 'One.\n\nTwo.\n\n[Mira is near.]\n\nThree.\n\n(You are tired.)\n\nRemind.';
    const roles = [
      { start: story.indexOf('[Mira'), end: story.indexOf('.]') + 2, role: 'assistant' as const },
      { start: story.indexOf('(You'), end: story.indexOf('.)') + 2, role: 'system' as const },
    ];
    await collect(client.streamNarration(narration({ story, storyRoles: roles })));
    const [request] = server.requestsTo('/v1/chat/completions');
    expect(request.body.messages).toEqual([
      { role: 'system', content: 'You are a masterful storyteller.' },
      { role: 'user', content: 'One.\n\nTwo.' },
      { role: 'assistant', content: '[Mira is near.]' },
      { role: 'user', content: 'Three.' },
      { role: 'system', content: '(You are tired.)' },
      { role: 'user', content: `Remind.\n\n${CONTINUE_INSTRUCTION}` },
    ]);
  });

  it('sends completion mode to the completions endpoint as system, a blank line, then the story', async () => {
    server.enqueue({
      text: ' The tide turns.',
      usage: { promptTokens: 50, completionTokens: 4, cachedTokens: 32 },
    });
    const req = narration({ mode: 'completion' });
    const events = await collect(client.streamNarration(req));

    const [request] = server.requestsTo('/v1/completions');
    expect(request.body.prompt).toBe(`${req.system}\n\n${req.story}`);
    expect(request.body.messages).toBeUndefined();
    expect(request.body.stream_options).toEqual({ include_usage: true });
    expect(
      events
        .filter((e) => e.type === 'text')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe(' The tide turns.');
    expect(events[events.length - 1]).toMatchObject({ type: 'done', usage: { cachedTokens: 32 } });
  });

  it.each([
    [400, { max_tokens: 1200, reasoning: { max_tokens: 400 } }],
    [-1, { max_tokens: 800, reasoning: { effort: 'none' } }],
    [0, { max_tokens: 800 }],
  ])('with a reasoning budget of %i sends %j', async (budget, expected) => {
    server.enqueue({ text: 'ok' });
    await collect(client.streamNarration(narration({ reasoningMaxTokens: budget })));
    const [request] = server.requestsTo('/v1/chat/completions');
    expect(request.body.max_tokens).toBe(expected.max_tokens);
    expect(request.body.reasoning).toEqual((expected as { reasoning?: unknown }).reasoning);
  });

  it('completes without streaming for summaries and memories', async () => {
    server.enqueue({
      text: 'Mira saved the player.',
      usage: { promptTokens: 40, completionTokens: 5, cachedTokens: 8 },
    });
    const result = await client.complete({
      system: 'Summarise.',
      user: 'Story excerpt:\n…\n\nMemory:',
      model: 'm2',
      temperature: 0.3,
      maxTokens: 600,
    });
    expect(result).toEqual({
      text: 'Mira saved the player.',
      usage: { promptTokens: 40, completionTokens: 5, cachedTokens: 8 },
      model: 'm2',
      finishReason: 'stop',
    });
    const [request] = server.requestsTo('/v1/chat/completions');
    expect(request.body).toMatchObject({
      model: 'm2',
      temperature: 0.3,
      max_tokens: 600,
      messages: [
        { role: 'system', content: 'Summarise.' },
        { role: 'user', content: 'Story excerpt:\n…\n\nMemory:' },
      ],
    });
    expect(request.body.stream).toBeUndefined();
  });

  describe('failures', () => {
    it('401 → auth, not retryable, says to check the key', async () => {
      server.enqueue({ status: 401, errorMessage: `Incorrect API key provided: ${API_KEY}` });
      const error = await failure(() => collect(client.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'auth', retryable: false, status: 401 });
      expect(error.message).toMatch(/API key/);
      // one request: the package's own retries are off
      expect(server.requests).toHaveLength(1);
    });

    it('404 → not_found, names the model', async () => {
      server.enqueue({ status: 404, errorMessage: 'model "test-model" not found' });
      const error = await failure(() => collect(client.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'not_found', retryable: false });
      expect(error.message).toContain('"test-model"');
      expect(error.message).toMatch(/endpoint path/);
    });

    it('429 burst → rate_limited, retryable, Retry-After in seconds', async () => {
      server.enqueue({ status: 429, retryAfter: 2, errorMessage: 'Rate limit reached, slow down' });
      const error = await failure(() => collect(client.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 2000 });
      expect(error.message).toMatch(/burst/);
    });

    it('429 with an HTTP-date Retry-After gives the delay until that date', async () => {
      const at = new Date(Date.now() + 30_000).toUTCString();
      server.enqueue({ status: 429, retryAfter: at });
      const error = await failure(() =>
        client.complete({ system: 's', user: 'u', model: 'm', temperature: 0.3, maxTokens: 10 }),
      );
      expect(error.kind).toBe('rate_limited');
      expect(error.retryAfterMs).toBeGreaterThan(25_000);
      expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
    });

    it('429 for a spent daily quota → rate_limited, not retryable, says so', async () => {
      server.enqueue({
        status: 429,
        errorMessage: 'Rate limit exceeded: free-models-per-day',
        errorCode: 'daily_limit',
      });
      const error = await failure(() => collect(client.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'rate_limited', retryable: false });
      expect(error.message).toMatch(/quota or daily cap/);
    });

    it('500 → server, retryable', async () => {
      server.enqueue({ status: 500 });
      const error = await failure(() => collect(client.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'server', retryable: true, status: 500 });
      expect(server.requests).toHaveLength(1);
    });

    it('400 → bad_request, not retryable', async () => {
      server.enqueue({ status: 400, errorMessage: 'context length exceeded' });
      const error = await failure(() => collect(client.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'bad_request', retryable: false });
      expect(error.message).toContain('context length exceeded');
    });

    it('a refused connection → unreachable, says nothing listens at the base URL', async () => {
      const port = await closedPort();
      const offline = new OpenAiModelClient({
        baseURL: `http://127.0.0.1:${port}/v1`,
        apiKey: API_KEY,
        timeoutMs: 5_000,
      });
      const error = await failure(() => collect(offline.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'unreachable', retryable: true });
      expect(error.message).toContain(`Nothing is listening at http://127.0.0.1:${port}/v1`);
      expect(error.message).toMatch(/Ollama|MODEL_BASE_URL/);
    });

    it('a server that hangs before answering → timeout after the configured time', async () => {
      const impatient = new OpenAiModelClient({ baseURL, apiKey: API_KEY, timeoutMs: 300 });
      server.enqueue({ hangMs: 3_000 });
      const started = Date.now();
      const error = await failure(() => collect(impatient.streamNarration(narration())));
      expect(error).toMatchObject({ kind: 'timeout', retryable: true });
      expect(error.message).toMatch(/took longer than 0\.3 s/);
      expect(Date.now() - started).toBeLessThan(2_000);
    });

    it('a stream that stalls mid-way → timeout (the bound covers the body, not only the headers)', async () => {
      const impatient = new OpenAiModelClient({ baseURL, apiKey: API_KEY, timeoutMs: 300 });
      server.enqueue({ text: 'slow words arrive one by one', chunks: 5, delayMs: 200 });
      const error = await failure(() => collect(impatient.streamNarration(narration())));
      expect(error.kind).toBe('timeout');
    });

    it('a stream cut mid-way (socket closed) → cut, retryable, after the text that arrived', async () => {
      server.enqueue({ text: 'one two three four five six', chunks: 6, cutAfterChunks: 2 });
      const seen: ModelStreamEvent[] = [];
      const error = await failure(async () => {
        for await (const event of client.streamNarration(narration())) seen.push(event);
      });
      expect(error).toMatchObject({ kind: 'cut', retryable: true });
      expect(seen.some((e) => e.type === 'text')).toBe(true);
      expect(seen.some((e) => e.type === 'done')).toBe(false);
    });

    it('a stream that ends cleanly without a finish reason or [DONE] → cut', async () => {
      server.enqueue({ text: 'half a reply', endWithoutDone: true });
      const error = await failure(() => collect(client.streamNarration(narration())));
      expect(error.kind).toBe('cut');
    });

    it('aborting the signal cancels the HTTP stream', async () => {
      server.enqueue({ text: 'a long reply that keeps coming', chunks: 10, delayMs: 100 });
      const controller = new AbortController();
      const error = await failure(async () => {
        for await (const event of client.streamNarration(narration(), controller.signal)) {
          if (event.type === 'text') controller.abort();
        }
      });
      expect(error).toMatchObject({ kind: 'cancelled', retryable: false });
      // the server sees the client go away before the reply was finished
      await waitFor(() => server.requests[0]?.endedAt !== undefined);
      expect(server.requests[0].aborted).toBe(true);
    });

    it('a consumer that stops reading early closes the HTTP stream; one that reads to the end leaves nothing to close', async () => {
      server.enqueue({ text: 'a long reply that keeps coming', chunks: 10, delayMs: 100 });
      for await (const event of client.streamNarration(narration())) {
        if (event.type === 'text') break;
      }
      await waitFor(() => server.requests[0]?.endedAt !== undefined);
      expect(server.requests[0].aborted).toBe(true);

      server.enqueue({ text: 'a whole reply', chunks: 3 });
      expect((await collect(client.streamNarration(narration()))).at(-1)?.type).toBe('done');
      await waitFor(() => server.requests[1]?.endedAt !== undefined);
      expect(server.requests[1].aborted).toBe(false);
    });

    it('an already aborted signal cancels before sending', async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await failure(() =>
        collect(client.streamNarration(narration(), controller.signal)),
      );
      expect(error.kind).toBe('cancelled');
    });
  });
});

describe('prompt-cache hints', () => {
  const server = new FakeOpenAiServer({ instant: true });
  let baseURL: string;
  const story = `${'The tide turns. '.repeat(300)}\n\n> You wait.`;

  beforeAll(async () => {
    ({ baseURL } = await server.start());
  });
  afterEach(() => server.clear());
  afterAll(() => server.close());

  const client = (options: { promptCacheKey?: boolean; cacheControl?: boolean }) =>
    new OpenAiModelClient({ baseURL, apiKey: API_KEY, timeoutMs: 5_000, ...options });

  it('sends the adventure id as prompt_cache_key when on, and nothing when off', async () => {
    await collect(
      client({ promptCacheKey: true }).streamNarration(narration({ cacheKey: 'adv-1' })),
    );
    await client({ promptCacheKey: true }).complete({
      system: 's',
      user: 'u',
      model: 'm',
      temperature: 0.3,
      maxTokens: 10,
      cacheKey: 'adv-1',
    });
    await collect(
      client({ promptCacheKey: false }).streamNarration(narration({ cacheKey: 'adv-1' })),
    );
    expect(server.requests.map((r) => r.body.prompt_cache_key)).toEqual([
      'adv-1',
      'adv-1',
      undefined,
    ]);
  });

  it('marks the system block and the history block start with cache_control, bytes unchanged', async () => {
    // Given a story whose history has a block start at character 800
    await collect(
      client({ cacheControl: true }).streamNarration(narration({ story, cacheBreakpoint: 800 })),
    );
    const [request] = server.requests;
    const [system, user] = request.body.messages;
    // Then the system message ends in a breakpoint, and the user message is split at 800
    expect(system.content).toEqual([
      {
        type: 'text',
        text: 'You are a masterful storyteller.',
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(user.content[0]).toEqual({
      type: 'text',
      text: story.slice(0, 800),
      cache_control: { type: 'ephemeral' },
    });
    expect(user.content[1].cache_control).toBeUndefined();
    // and the parts join into exactly the prompt sent without breakpoints
    expect(user.content.map((p: { text: string }) => p.text).join('')).toBe(
      `${story}\n\n${CONTINUE_INSTRUCTION}`,
    );
    // Off (the default): plain string contents
    server.clear();
    await collect(client({}).streamNarration(narration({ story, cacheBreakpoint: 800 })));
    expect(typeof server.requests[0].body.messages[1].content).toBe('string');
  });

  it("carries the provider's cached_tokens into the usage of the done event", async () => {
    // Given the same long prompt twice: the fake serves the shared prefix the second time
    const first = await collect(client({}).streamNarration(narration({ story })));
    const second = await collect(client({}).streamNarration(narration({ story })));
    const usage = (events: ModelStreamEvent[]) =>
      (events[events.length - 1] as Extract<ModelStreamEvent, { type: 'done' }>).usage;
    expect(usage(first).cachedTokens).toBe(0);
    expect(usage(second).cachedTokens).toBeGreaterThanOrEqual(1024);
    expect(usage(second).cachedTokens % 128).toBe(0);
  });
});

async function waitFor(test: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
