// The spans of our own code and the trace context that crosses a process. Only the OpenTelemetry
// API here: without a started SDK (tracing.sdk.ts) every helper answers at once with nothing,
// so a process with tracing off pays a flag check per call.
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
} from '@opentelemetry/api';
import { BullMQOtel } from 'bullmq-otel';

/** The tracer's name: every span of ours, whatever the process, comes from it. */
export const TRACER_NAME = 'chronicle';

let enabled = false;

/** Whether this process exports traces (startTracing found an endpoint). */
export function tracingEnabled(): boolean {
  return enabled;
}

/** For tracing.sdk.ts only. */
export function setTracingEnabled(on: boolean): void {
  enabled = on;
}

/** What a span's code may add once it knows it (the model's token counts, say). */
export interface SpanNotes {
  set(attributes: Attributes): void;
}

const NO_NOTES: SpanNotes = { set: () => undefined };

/**
 * Runs `fn` in a span named `name`, a child of the active one, ended when `fn` settles (an
 * error is recorded on it and thrown on). Tracing off: `fn` runs alone.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (notes: SpanNotes) => Promise<T>,
): Promise<T> {
  if (!enabled) return fn(NO_NOTES);
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn({ set: (more) => span.setAttributes(more) });
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * The active span's ids, for a log line. Named as OpenTelemetry names them in a log format of
 * its own (`trace_id`, `span_id`), so a log backend links the line to its trace unaided.
 */
export function currentTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!enabled) return undefined;
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const ids = span.spanContext();
  if (!isSpanContextValid(ids)) return undefined;
  return { trace_id: ids.traceId, span_id: ids.spanId };
}

/** The active context as a W3C `traceparent`, to store beside work another process picks up. */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** Runs `fn` as a continuation of the trace `traceparent` names (anything else: as it is). */
export function withTraceparent<T>(traceparent: unknown, fn: () => T): T {
  if (!enabled || typeof traceparent !== 'string') return fn();
  return context.with(propagation.extract(ROOT_CONTEXT, { traceparent }), fn);
}

/**
 * BullMQ's telemetry for a Queue or a Worker (its `telemetry` option): the producer's span and
 * context travel in the job's options, and the worker's `process` span is their child.
 * Undefined when tracing is off, so BullMQ takes its untraced path.
 */
export function queueTelemetry(): BullMQOtel | undefined {
  return enabled ? new BullMQOtel({ tracerName: 'bullmq' }) : undefined;
}
