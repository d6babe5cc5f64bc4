import { FakeOpenAiServer } from '../../../test/support/fake-openai-server';
import { ModelError } from './model.error';
import { OpenAiEmbedder } from './openai.embedder';

const API_KEY = 'sk-embed-SECRET0123456789abcdef';

describe('OpenAiEmbedder against an OpenAI-compatible server', () => {
  const server = new FakeOpenAiServer({ embeddingDimensions: 8 });
  let baseURL: string;

  beforeAll(async () => {
    ({ baseURL } = await server.start());
  });
  afterEach(() => server.clear());
  afterAll(() => server.close());

  it('embeds 70 texts in 3 requests of at most 32, keeping the order', async () => {
    const embedder = new OpenAiEmbedder({ baseURL, apiKey: API_KEY, model: 'embed-small' });
    const texts = Array.from({ length: 70 }, (_, i) => `memory number ${i}`);

    const { vectors, usage } = await embedder.embed(texts);

    const requests = server.requestsTo('/v1/embeddings');
    expect(requests.map((r) => r.body.input.length)).toEqual([32, 32, 6]);
    expect(requests.flatMap((r) => r.body.input)).toEqual(texts);
    expect(
      requests.every((r) => r.body.model === 'embed-small' && r.body.encoding_format === 'float'),
    ).toBe(true);
    expect(vectors).toHaveLength(70);
    // the fake server reports one prompt token per input: every batch's usage is summed
    expect(usage).toEqual({ promptTokens: 70, completionTokens: 0, cachedTokens: 0 });
    expect(vectors.every((v) => v.length === 8)).toBe(true);
    // equal texts get equal vectors, so the order is checkable against a second call
    const [again] = (await embedder.embed([texts[40]])).vectors;
    expect(again).toEqual(vectors[40]);
  });

  it('sends nothing for no texts', async () => {
    const embedder = new OpenAiEmbedder({ baseURL, apiKey: API_KEY, model: 'embed-small' });
    expect((await embedder.embed([])).vectors).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('maps failures like the model client and keeps the key out', async () => {
    const embedder = new OpenAiEmbedder({ baseURL, apiKey: API_KEY, model: 'embed-small' });
    server.enqueue({ status: 401, errorMessage: `bad key ${API_KEY}`, path: '/v1/embeddings' });
    const error = await embedder.embed(['a']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ kind: 'auth', retryable: false });
    expect(JSON.stringify(error) + (error as Error).message).not.toContain(API_KEY);
  });

  it('times out a hanging request', async () => {
    const embedder = new OpenAiEmbedder({
      baseURL,
      apiKey: API_KEY,
      model: 'embed-small',
      timeoutMs: 200,
    });
    server.enqueue({ hangMs: 2_000 });
    const error = await embedder.embed(['a']).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
  });
});
