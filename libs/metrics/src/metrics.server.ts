// A worker's /metrics: a small HTTP server of its own (workers serve nothing else), on HOST and
// METRICS_PORT. Closed like the API's admin routes: every request needs
// "Authorization: Bearer <ADMIN_API_KEY>" whatever its path, and then only GET or HEAD of
// exactly /metrics answers (anything else is a 404), so no spelling reaches the figures
// without the key.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { portInUse } from '@chronicle/platform';
import type { ChronicleMetrics } from './chronicle-metrics';

export interface MetricsServerOptions {
  host: string;
  /** 0: any free port (the one taken is in `port` and the start-up log). */
  port: number;
  /** Whether a bearer token is the admin key (false for every token when none is set). */
  isAdminKey: (token: string) => boolean;
  /** Says what to do when nobody may read the metrics (no admin key configured). */
  closedBecause?: string;
}

export class MetricsServer {
  private server: Server | undefined;

  constructor(
    private readonly metrics: ChronicleMetrics,
    private readonly options: MetricsServerOptions,
  ) {}

  /** The port listened on (after `listen`). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  async listen(): Promise<number> {
    const server = createServer((req, res) => void this.answer(req, res));
    // A scrape is short; a client that opens a connection and sends nothing is let go.
    server.requestTimeout = 10_000;
    server.headersTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => {
        reject(portInUse(error, 'METRICS_PORT', this.options.port, this.options.host) ?? error);
      });
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.server = server;
    return this.port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !this.options.isAdminKey(token)) {
      const message =
        this.options.closedBecause ??
        'metrics need the admin key: send "Authorization: Bearer <ADMIN_API_KEY>"';
      return send(res, 401, 'application/json', JSON.stringify({ statusCode: 401, message }));
    }
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return send(
        res,
        404,
        'application/json',
        JSON.stringify({ statusCode: 404, message: 'a worker serves only GET /metrics' }),
      );
    }
    try {
      const { contentType, body } = await this.metrics.exposition();
      send(res, 200, contentType, req.method === 'HEAD' ? '' : body);
    } catch (error) {
      send(res, 500, 'text/plain', `metrics could not be collected: ${String(error)}`);
    }
  }
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}
