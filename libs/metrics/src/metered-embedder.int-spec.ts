// The embedder's calls are paid for like the model's: every process that embeds (a memory
// written, a turn's retrieval, a context preview) counts them under purpose "embedding".
import { ModelError, OfflineEmbedder, OpenAiEmbedder } from '@chronicle/llm';
import { DEFAULT_MODEL_PRICES } from '@chronicle/platform';
import { FakeOpenAiServer } from '../../../test/support/fake-openai-server';
import { ChronicleMetrics } from './chronicle-metrics';
import { MeteredEmbedder } from './metered-model.client';

const server = new FakeOpenAiServer({ embeddingDimensions: 8 });
let baseURL: string;

beforeAll(async () => {
  ({ baseURL } = await server.start());
});
afterEach(() => server.clear());
afterAll(() => server.close());

async function value(
  metrics: ChronicleMetrics,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  // a histogram's _count and _sum are values of the histogram itself
  const metric = metrics.registry.getSingleMetric(name.replace(/_(count|sum)$/, ''));
  if (!metric) throw new Error(`${name} is not registered`);
  const { values } = await metric.get();
  const found = values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? name) === name &&
      Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want),
  );
  return found?.value ?? 0;
}

function embedder(metrics: ChronicleMetrics, model = 'text-embedding-3-small') {
  return new MeteredEmbedder(
    new OpenAiEmbedder({ baseURL, apiKey: 'sk-metered-0123456789', model, batchSize: 2 }),
    metrics,
    DEFAULT_MODEL_PRICES,
  );
}

describe('MeteredEmbedder', () => {
  it('given texts embedded in several requests, then one call is counted with their tokens and cost', async () => {
    const metrics = new ChronicleMetrics('memory-worker', { processDefaults: false });

    const { vectors } = await embedder(metrics).embed(['one', 'two', 'three']);

    expect(vectors).toHaveLength(3);
    expect(server.requestsTo('/v1/embeddings')).toHaveLength(2);
    const ok = { purpose: 'embedding', result: 'ok' };
    expect(await value(metrics, 'chronicle_model_request_duration_seconds_count', ok)).toBe(1);
    // the fake server reports one prompt token per text
    const prompt = { model: 'text-embedding-3-small', purpose: 'embedding', kind: 'prompt' };
    expect(await value(metrics, 'chronicle_model_tokens_total', prompt)).toBe(3);
    const cost = { model: 'text-embedding-3-small', purpose: 'embedding' };
    expect(await value(metrics, 'chronicle_model_cost_usd_total', cost)).toBeCloseTo(
      (3 * 0.02) / 1_000_000,
      12,
    );
  });

  it('given the provider refuses the key, then the error is counted by its code and still thrown', async () => {
    const metrics = new ChronicleMetrics('api', { processDefaults: false });
    server.enqueue({ status: 401, path: '/v1/embeddings' });

    await expect(embedder(metrics).embed(['a'])).rejects.toBeInstanceOf(ModelError);

    expect(
      await value(metrics, 'chronicle_model_errors_total', {
        purpose: 'embedding',
        code: 'model_unauthorized',
      }),
    ).toBe(1);
    expect(
      await value(metrics, 'chronicle_model_request_duration_seconds_count', {
        purpose: 'embedding',
        result: 'error',
      }),
    ).toBe(1);
  });

  it('given nothing to embed, then nothing is sent and nothing counted', async () => {
    const metrics = new ChronicleMetrics('context-worker', { processDefaults: false });
    const metered = new MeteredEmbedder(new OfflineEmbedder(), metrics, DEFAULT_MODEL_PRICES);

    expect((await metered.embed([])).vectors).toEqual([]);
    expect(metered.model).toBe(new OfflineEmbedder().model);

    expect(
      await value(metrics, 'chronicle_model_request_duration_seconds_count', {
        purpose: 'embedding',
        result: 'ok',
      }),
    ).toBe(0);
  });
});
