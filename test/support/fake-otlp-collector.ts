// An OpenTelemetry collector on loopback, for tests: it takes OTLP/HTTP JSON trace exports
// (POST /v1/traces, what @opentelemetry/exporter-trace-otlp-http sends) and keeps every span,
// flattened with the service that sent it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One exported span, as the collector received it. */
export interface CollectedSpan {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  /** '' for a root span */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer */
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpAttribute[];
      }>;
    }>;
  }>;
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: OtlpAttribute[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));
}

export class FakeOtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Export requests that were not OTLP JSON traces (a test expects none). */
  readonly rejected: string[] = [];

  private constructor(
    private readonly server: Server,
    /** what OTEL_EXPORTER_OTLP_ENDPOINT is set to, e.g. http://127.0.0.1:41234 */
    readonly url: string,
  ) {}

  static async start(): Promise<FakeOtlpCollector> {
    // The handler needs the collector, which needs the server's port: made once it listens.
    const made: { collector?: FakeOtlpCollector } = {};
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const ok = made.collector?.receive(request.method, request.url, request.headers, chunks);
        response.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    made.collector = new FakeOtlpCollector(server, `http://127.0.0.1:${port}`);
    return made.collector;
  }

  /** The spans of one trace. */
  trace(traceId: string): CollectedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private receive(
    method: string | undefined,
    url: string | undefined,
    headers: Record<string, string | string[] | undefined>,
    chunks: Buffer[],
  ): boolean {
    const raw = Buffer.concat(chunks);
    const type = String(headers['content-type'] ?? '');
    if (method !== 'POST' || url !== '/v1/traces' || !type.startsWith('application/json')) {
      this.rejected.push(`${method} ${url} (${type})`);
      return false;
    }
    const body = headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
    const exported = JSON.parse(body.toString('utf8')) as OtlpExport;
    for (const resourceSpans of exported.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            service,
            scope: scopeSpans.scope?.name ?? '',
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
          });
        }
      }
    }
    return true;
  }
}
