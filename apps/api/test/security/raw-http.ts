import { request } from 'node:http';

// Requests sent byte for byte: fetch (and URL) would resolve dot segments and re-encode the path
// before it left, and the point of these tests is the spelling the server receives.

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawReply> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          ...(options.body !== undefined && { 'content-length': Buffer.byteLength(options.body) }),
          ...options.headers,
        },
      },
      (res) => {
        // An event stream (the room's, a turn's) never ends: what these tests check is how it
        // was answered, so its status and headers are the reply, and the connection is closed.
        if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', body: null });
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text === '' ? null : JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
