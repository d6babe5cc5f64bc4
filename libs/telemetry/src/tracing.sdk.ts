// Starts OpenTelemetry's trace SDK in a process, before anything it instruments is loaded (each
// app's main.ts imports its tracing.ts first): the maintained instrumentations of http, express,
// pg and ioredis patch those modules as they are required. With OTEL_EXPORTER_OTLP_ENDPOINT
// unset nothing starts: no SDK, no patched module, nothing exported.
import { SpanKind, type Attributes, type Context } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  SamplingDecision,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-node';
import { setTracingEnabled } from './tracing';

/** How long a stopping process waits for its last spans to reach the collector. */
const FLUSH_TIMEOUT_MS = 5_000;

/** Requests that are not a user's: probes and scrapes start no trace. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

let provider: NodeTracerProvider | undefined;

/**
 * A trace starts where work enters: a request, a job, an enqueue. The housekeeping of a
 * background loop (BullMQ polling for jobs and checking stalled ones, the reconciler's and the
 * outbox sweeper's reads) would otherwise start a trace of its own every few seconds.
 */
class EntryPointSampler implements Sampler {
  shouldSample(
    _context: Context,
    _traceId: string,
    _name: string,
    kind: SpanKind,
    _attributes: Attributes,
  ): SamplingResult {
    return {
      decision:
        kind === SpanKind.INTERNAL
          ? SamplingDecision.NOT_RECORD
          : SamplingDecision.RECORD_AND_SAMPLED,
    };
  }

  toString(): string {
    return 'EntryPointSampler';
  }
}

/** The endpoint traces go to, or undefined: unset, empty, or not an http(s) URL (config says so). */
export function otlpEndpoint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const raw = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!raw || !URL.canParse(raw)) return undefined;
  const { protocol } = new URL(raw);
  return protocol === 'http:' || protocol === 'https:' ? raw : undefined;
}

/**
 * Starts tracing for `app` (service.name `chronicle-<app>`) when OTEL_EXPORTER_OTLP_ENDPOINT is
 * set: spans are batched and sent as OTLP/HTTP (JSON) to `<endpoint>/v1/traces`; the exporter
 * reads OTEL_EXPORTER_OTLP_HEADERS and the other OTEL_EXPORTER_OTLP_* variables itself, and
 * the batch processor OTEL_BSP_*. Returns whether it started.
 */
export function startTracing(app: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (provider || !otlpEndpoint(env)) return false;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': `chronicle-${app}` }),
    sampler: new ParentBasedSampler({ root: new EntryPointSampler() }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // The global tracer provider, the async-hooks context manager and the W3C propagator
  // (traceparent), which BullMQ's telemetry and withTraceparent use.
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.test(request.url ?? ''),
      }),
      // The route's span and name; Nest's middleware chain would add a span per layer.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      // Only statements and commands inside a trace: the background loops' polling starts none.
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  setTracingEnabled(true);
  return true;
}

/** Sends the spans still batched and stops the SDK (bounded); a no-op when tracing is off. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  if (!stopping) return;
  provider = undefined;
  setTracingEnabled(false);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    stopping.shutdown().catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}
