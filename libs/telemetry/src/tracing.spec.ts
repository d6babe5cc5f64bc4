import { context, propagation, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import {
  currentTraceIds,
  currentTraceparent,
  inSpan,
  queueTelemetry,
  setTracingEnabled,
  withTraceparent,
} from './tracing';
import { otlpEndpoint, startTracing } from './tracing.sdk';

describe('tracing off', () => {
  it('given no OTEL_EXPORTER_OTLP_ENDPOINT, when tracing is started, then nothing starts and every helper answers with nothing', async () => {
    expect(startTracing('api', {})).toBe(false);
    expect(startTracing('api', { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    const ran = await inSpan('prompt build', {}, async (span) => {
      span.set({ 'chronicle.prompt.tokens': 1 });
      return 'ran';
    });
    expect(ran).toBe('ran');
    expect(currentTraceIds()).toBeUndefined();
    expect(currentTraceparent()).toBeUndefined();
    expect(queueTelemetry()).toBeUndefined();
    expect(
      withTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', () => 7),
    ).toBe(7);
  });

  it('given an endpoint that is not an http(s) URL, when it is read, then it is none (the config check names it)', () => {
    expect(otlpEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toBeUndefined();
    expect(otlpEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector' })).toBeUndefined();
    expect(otlpEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(
      'http://collector:4318',
    );
  });
});

describe('tracing on', () => {
  const exporter = new InMemorySpanExporter();
  let provider: NodeTracerProvider;

  beforeAll(() => {
    provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    setTracingEnabled(true);
  });

  afterAll(async () => {
    setTracingEnabled(false);
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it('given a traceparent stored inside a span, when work continues from it elsewhere, then its spans are children of that span', async () => {
    let stored: string | undefined;
    let ids: ReturnType<typeof currentTraceIds>;
    await inSpan('append SubmitAction', { 'chronicle.events': 1 }, async () => {
      stored = currentTraceparent();
      ids = currentTraceIds();
    });
    // later, from no context at all (the outbox sweeper)
    await withTraceparent(stored, () =>
      inSpan('model call', {}, async (span) => span.set({ 'gen_ai.usage.input_tokens': 321 })),
    );
    const [append, model] = exporter.getFinishedSpans();
    expect(append.name).toBe('append SubmitAction');
    expect(ids).toEqual({
      trace_id: append.spanContext().traceId,
      span_id: append.spanContext().spanId,
    });
    expect(model.spanContext().traceId).toBe(append.spanContext().traceId);
    expect(model.parentSpanContext?.spanId).toBe(append.spanContext().spanId);
    expect(model.attributes['gen_ai.usage.input_tokens']).toBe(321);
    expect(queueTelemetry()).toBeDefined();
  });

  it('given a span whose work throws, when it ends, then the error is recorded on it and thrown on', async () => {
    exporter.reset();
    await expect(
      inSpan('stream done', {}, async () => {
        throw new Error('redis down');
      }),
    ).rejects.toThrow('redis down');
    const [span] = exporter.getFinishedSpans();
    expect(span.status.code).toBe(2); // ERROR
    expect(span.events.map((event) => event.name)).toEqual(['exception']);
  });
});
