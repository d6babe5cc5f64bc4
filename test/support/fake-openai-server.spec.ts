import { FakeOpenAiServer, startFakeOpenAiServer } from './fake-openai-server';

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(body),
  });
}

function sseData(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}

describe('FakeOpenAiServer', () => {
  let server: FakeOpenAiServer & { url: string; baseURL: string };

  beforeAll(async () => {
    server = await startFakeOpenAiServer({ instant: true });
  });
  afterEach(() => server.clear());
  afterAll(() => server.close());

  it('listens on 127.0.0.1 on a random port and records every request', async () => {
    expect(server.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    await post(`${server.baseURL}/chat/completions`, {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      body: { model: 'm' },
      headers: { authorization: 'Bearer k' },
    });
  });

  it('streams scripted chunks, then the finish reason, the usage when asked, and [DONE]', async () => {
    server.enqueue({
      text: 'abcdef',
      chunks: ['ab', 'cd', 'ef'],
      usage: { promptTokens: 7, cachedTokens: 5 },
    });
    const res = await post(`${server.baseURL}/chat/completions`, {
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      messages: [],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const frames = sseData(await res.text()) as Array<{
      choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
      usage?: unknown;
    }>;
    expect(frames.slice(0, 3).map((f) => f.choices[0].delta.content)).toEqual(['ab', 'cd', 'ef']);
    expect(frames[3].choices[0].finish_reason).toBe('stop');
    expect(frames[4]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 7, prompt_tokens_details: { cached_tokens: 5 } },
    });
    expect(frames[5]).toBe('[DONE]');
  });

  it('answers from the default reply function when the queue is empty', async () => {
    server.setDefaultReply((request) => ({ text: `echo ${request.body.prompt}` }));
    const res = await post(`${server.baseURL}/completions`, { model: 'm', prompt: 'x' });
    expect(((await res.json()) as { choices: Array<{ text: string }> }).choices[0].text).toBe(
      'echo x',
    );
    server.setDefaultReply(undefined);
  });

  it('fails on command with a status and Retry-After, then recovers', async () => {
    server.enqueue({ status: 429, retryAfter: 3 }, { text: 'fine' });
    const first = await post(`${server.baseURL}/chat/completions`, { model: 'm', messages: [] });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('3');
    const second = await post(`${server.baseURL}/chat/completions`, { model: 'm', messages: [] });
    expect(
      ((await second.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]
        .message.content,
    ).toBe('fine');
  });

  it('keeps a path-bound script for its endpoint', async () => {
    server.enqueue({ status: 500, path: '/v1/embeddings' });
    const chat = await post(`${server.baseURL}/chat/completions`, { model: 'm', messages: [] });
    expect(chat.status).toBe(200);
    const embeddings = await post(`${server.baseURL}/embeddings`, { model: 'e', input: ['a'] });
    expect(embeddings.status).toBe(500);
    expect(server.pending).toBe(0);
  });

  it('returns deterministic embeddings, one per input', async () => {
    const res = await post(`${server.baseURL}/embeddings`, { model: 'e', input: ['a', 'b', 'a'] });
    const { data } = (await res.json()) as { data: Array<{ index: number; embedding: number[] }> };
    expect(data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(data[0].embedding).toEqual(data[2].embedding);
    expect(data[0].embedding).not.toEqual(data[1].embedding);
  });

  it('cuts the socket mid-stream on command', async () => {
    server.enqueue({ text: 'one two three four', chunks: 4, cutAfterChunks: 2 });
    const res = await post(`${server.baseURL}/chat/completions`, {
      model: 'm',
      stream: true,
      messages: [],
    });
    await expect(res.text()).rejects.toThrow();
  });

  it('answers 404 for an unknown route', async () => {
    const res = await post(`${server.url}/v1/unknown`, {});
    expect(res.status).toBe(404);
  });

  it('closes with a request still hanging', async () => {
    const other = await startFakeOpenAiServer();
    other.enqueue({ hangMs: 60_000 });
    const pending = post(`${other.baseURL}/chat/completions`, { model: 'm', messages: [] }).catch(
      (e: unknown) => e,
    );
    await other.waitForRequests(1);
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    // fetch's errors come from another realm, so check the shape rather than instanceof
    expect(String(await pending)).toMatch(/fetch failed|terminated|socket/i);
  });

  describe("cached tokens, by OpenAI's prefix rule", () => {
    const usageOf = async (body: Record<string, unknown>) => {
      const response = await post(`${server.baseURL}/chat/completions`, { model: 'm', ...body });
      type Usage = { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
      return ((await response.json()) as { usage: Usage }).usage;
    };
    const chat = (user: string, extra: Record<string, unknown> = {}) => ({
      messages: [
        { role: 'system', content: 'S'.repeat(2000) },
        { role: 'user', content: user },
      ],
      ...extra,
    });

    it('serves the prefix a request shares with an earlier one, from 1,024 tokens in steps of 128', async () => {
      // Given a first request: nothing seen before
      const story = 'x'.repeat(6000);
      expect((await usageOf(chat(story))).prompt_tokens_details.cached_tokens).toBe(0);
      // When the next one repeats it and appends (2000 + 1 + 6000 shared characters, 4 per token)
      const next = await usageOf(chat(`${story} and more`));
      // Then the shared 2000 tokens are served, rounded down to the 128-token grid
      expect(next.prompt_tokens_details.cached_tokens).toBe(1024 + 7 * 128);
      // and a prefix under 1,024 tokens is not served at all
      const short = await usageOf({ messages: [{ role: 'user', content: 'y'.repeat(3000) }] });
      expect(short.prompt_tokens_details.cached_tokens).toBe(0);
      const shortAgain = await usageOf({ messages: [{ role: 'user', content: 'y'.repeat(3000) }] });
      expect(shortAgain.prompt_tokens_details.cached_tokens).toBe(0);
    });

    it('keeps one cache per prompt_cache_key, and reads content parts as one text', async () => {
      const story = 'z'.repeat(6000);
      await usageOf(chat(story, { prompt_cache_key: 'adventure-a' }));
      // Another key has not seen it
      const other = await usageOf(chat(story, { prompt_cache_key: 'adventure-b' }));
      expect(other.prompt_tokens_details.cached_tokens).toBe(0);
      // The same key has, even split into parts at a breakpoint
      const parts = [
        { type: 'text', text: story.slice(0, 3000), cache_control: { type: 'ephemeral' } },
        { type: 'text', text: story.slice(3000) },
      ];
      const same = await usageOf({
        prompt_cache_key: 'adventure-a',
        messages: [
          { role: 'system', content: 'S'.repeat(2000) },
          { role: 'user', content: parts },
        ],
      });
      expect(same.prompt_tokens_details.cached_tokens).toBe(1920);
      expect(server.cacheTotals).toMatchObject({ requests: 3, cachedTokens: 1920 });
    });

    it('lets a script state the cached tokens', async () => {
      server.enqueue({ usage: { cachedTokens: 3 } });
      expect((await usageOf(chat('q'))).prompt_tokens_details.cached_tokens).toBe(3);
    });
  });
});
