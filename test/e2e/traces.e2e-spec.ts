// What an operator's collector receives: the built API and context worker as processes, with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at a fake OTLP collector on loopback. One turn is one
// trace: the API's request, append and enqueue, and the worker's job, prompt, model call,
// append and stream end, the worker's job parented across the queue to the API's enqueue.
import { AppSystem, FakeOtlpCollector, type CollectedSpan } from '@chronicle/testing';
import { ChronicleClient } from './support/chronicle.client';

jest.setTimeout(240_000);

let collector: FakeOtlpCollector;
let system: AppSystem;
let client: ChronicleClient;

const SPAN_KIND = { server: 2, producer: 4, consumer: 5 } as const;

beforeAll(async () => {
  collector = await FakeOtlpCollector.start();
  system = await AppSystem.start({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      // batches leave every 100 ms, so the test's wait for them is short
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
  system.fake.setDefaultReply(() => ({
    text: 'The lamp flickers back to life.',
    usage: { promptTokens: 321, completionTokens: 12, cachedTokens: 0 },
  }));
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
  await collector?.close();
});

/** Polls `find` until it answers (bounded). */
async function eventually<T>(what: string, find: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not collected within 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The spans named `name` from `service`: at least one (a job that stalled runs again). */
function named(spans: CollectedSpan[], name: string, service: string): CollectedSpan[] {
  const found = spans.filter((span) => span.name === name && span.service === service);
  if (found.length === 0) {
    const seen = spans.map((s) => `${s.service} ${s.name}`).join('\n');
    throw new Error(`no "${name}" from ${service} in the turn's trace:\n${seen}`);
  }
  return found;
}

/** The span's parents, nearest first, as far as the trace's spans reach. */
function ancestors(spans: CollectedSpan[], span: CollectedSpan): CollectedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: CollectedSpan[] = [];
  for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) {
    chain.push(parent);
  }
  return chain;
}

describe('traces of a turn', () => {
  it('given tracing on, when a turn is played, then one trace holds the spans of the API and the worker, the job parented across the queue', async () => {
    const adventureId = await client.createAdventure({
      title: 'Traces',
      opening: 'The lamp of the Saltmarch light has been dark for three nights.',
      settings: { model: 'fake-model' },
    });
    const played = await client.play(adventureId, 'do', 'light the lamp');
    expect(played.stream.outcome).toBe('done');

    // The POST of this turn, and the worker's last span of it, once both are exported.
    const post = await eventually('the POST span', () =>
      collector.spans.find(
        (span) =>
          span.service === 'chronicle-api' &&
          span.kind === SPAN_KIND.server &&
          // the http instrumentation's names, old or stable semantic conventions
          (span.attributes['http.method'] ?? span.attributes['http.request.method']) === 'POST' &&
          String(span.attributes['http.target'] ?? span.attributes['url.path']).endsWith(
            `/v1/adventures/${adventureId}/actions`,
          ),
      ),
    );
    // The job's span ends last, after the turn's stream has.
    await eventually('the job span', () =>
      collector
        .trace(post.traceId)
        .find(
          (span) => span.name === 'process narrate' && span.service === 'chronicle-context-worker',
        ),
    );
    const spans = collector.trace(post.traceId);

    // The API's half: the request, its append, the relay's enqueue (once: the job id is the turn's).
    expect(post.parentSpanId).toBe('');
    const [append] = named(spans, 'append SubmitAction', 'chronicle-api');
    const adds = named(spans, 'add narrate.narrate-turn', 'chronicle-api');
    expect(adds).toHaveLength(1);
    const [add] = adds;
    expect(add.kind).toBe(SPAN_KIND.producer);
    expect(ancestors(spans, append)).toContainEqual(post);
    expect(ancestors(spans, add)).toContainEqual(append);

    // The worker's half, parented across the queue: its job span is the enqueue's child (each
    // run of it, should the job have stalled on a busy machine and run again).
    const jobs = named(spans, 'process narrate', 'chronicle-context-worker');
    for (const job of jobs) {
      expect(job.kind).toBe(SPAN_KIND.consumer);
      expect(job.parentSpanId).toBe(add.spanId);
    }
    for (const name of ['prompt build', 'model call', 'append RecordNarration', 'stream done']) {
      for (const span of named(spans, name, 'chronicle-context-worker')) {
        expect(ancestors(spans, span)).toContainEqual(
          expect.objectContaining({ name: 'process narrate' }),
        );
      }
    }
    const [model] = named(spans, 'model call', 'chronicle-context-worker');
    expect(model.attributes).toMatchObject({
      'gen_ai.request.model': 'fake-model',
      'gen_ai.usage.input_tokens': 321,
      'gen_ai.usage.output_tokens': 12,
    });
    // The maintained instrumentations' spans are in the same trace: Postgres and Redis, both sides.
    for (const service of ['chronicle-api', 'chronicle-context-worker']) {
      const scopes = new Set(spans.filter((s) => s.service === service).map((s) => s.scope));
      expect(scopes).toContain('@opentelemetry/instrumentation-pg');
      expect(scopes).toContain('@opentelemetry/instrumentation-ioredis');
    }

    // No span of this turn's job is in another trace.
    const elsewhere = collector.spans.filter(
      (span) =>
        span.traceId !== post.traceId &&
        (span.name === 'process narrate' || span.name === 'append RecordNarration'),
    );
    expect(elsewhere).toEqual([]);
    expect(collector.rejected).toEqual([]);

    // The worker's log line of the narration names the trace and one of its spans.
    const worker = system.processes.find((p) => p.app === 'context-worker' && p.running);
    const narrated = worker?.logs().find((line) => line.msg === 'narrated');
    expect(narrated?.trace_id).toBe(post.traceId);
    expect(spans.map((span) => span.spanId)).toContain(narrated?.span_id);
  });
});
