import { context, trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { setTracingEnabled } from '@chronicle/telemetry';
import { JsonLogger, withLogContext } from './logger';

describe('JsonLogger and traces', () => {
  let provider: NodeTracerProvider;

  beforeAll(() => {
    provider = new NodeTracerProvider();
    provider.register();
    setTracingEnabled(true);
  });

  afterAll(async () => {
    setTracingEnabled(false);
    await provider.shutdown();
    trace.disable();
    context.disable();
  });

  it('given a line written inside a span, when it is printed, then it carries the trace and span ids beside the log context', () => {
    const lines: string[] = [];
    const logger = new JsonLogger('api', 'info', (line) => lines.push(line));
    const span = trace.getTracer('test').startSpan('POST /v1/adventures/:id/actions');
    context.with(trace.setSpan(context.active(), span), () =>
      withLogContext({ turnId: 't1' }, () => logger.event('info', 'inside')),
    );
    logger.event('info', 'outside');
    span.end();
    const [inside, outside] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(inside).toMatchObject({
      msg: 'inside',
      turnId: 't1',
      trace_id: span.spanContext().traceId,
      span_id: span.spanContext().spanId,
    });
    expect(outside.trace_id).toBeUndefined();
  });
});
