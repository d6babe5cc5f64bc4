// The scale bench's two helpers, each on its own thread so that the 2,000 players on the main
// thread do not delay what they measure (and the other way round):
//   - the model: the fake OpenAI-compatible server, answering every generation in a fixed
//     MODEL_LATENCY_MS, streamed in chunks; it reports when each turn's request arrived and when
//     its last byte went out, on the process's shared clock (timeOrigin + now);
//   - the proxy: a round-robin HTTP proxy in front of the API processes, as a load balancer
//     without stickiness is; every response says which API answered (`x-bench-upstream`).
// The main thread starts them with `startThread` and reads their messages.
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { lastMarker, promptOf, REPLY } from '../apps';
import {
  startFakeOpenAiServer,
  type FakeScript,
  type RecordedRequest,
} from '../../test/support/fake-openai-server';

export const MODEL_LATENCY_MS = 1_000;
/** Text chunks per reply; the stream also carries a finish frame, a usage frame and [DONE]. */
export const MODEL_CHUNKS = 9;
const MODEL_FRAMES = MODEL_CHUNKS + 3;
export const UPSTREAM_HEADER = 'x-bench-upstream';

type Role = { role: 'model' } | { role: 'proxy'; upstreams: string[] };

/** What the model thread reports: a turn's request arrived, or its response was finished. */
export type ModelMessage =
  | { kind: 'listening'; url: string }
  | { kind: 'times'; times: Array<{ marker: string; receivedAt: number; finishedAt?: number }> };

export type ProxyMessage = { kind: 'listening'; url: string };

/** performance.now() on one thread, as a time every thread of the process agrees on. */
export const sharedClock = (perfNow = performance.now()): number =>
  performance.timeOrigin + perfNow;

async function runModel(): Promise<void> {
  // The first request that carries a turn's marker is its narration; a memory pass or a retry
  // that comes later carries the same marker and must not move the turn's time.
  const seen = new Set<string>();
  const unfinished = new Map<string, RecordedRequest>();
  let pending: Array<{ marker: string; receivedAt: number; finishedAt?: number }> = [];
  const script: FakeScript = {
    text: REPLY,
    chunks: MODEL_CHUNKS,
    // the fake waits this long before each frame of the stream (and once before a reply that
    // is not streamed)
    delayMs: MODEL_LATENCY_MS / MODEL_FRAMES,
  };
  const fake = await startFakeOpenAiServer({
    maxRecorded: 64,
    defaultReply: (request) => {
      const marker = lastMarker(promptOf(request.body));
      if (marker && !seen.has(marker) && request.path.endsWith('completions')) {
        seen.add(marker);
        unfinished.set(marker, request);
        pending.push({ marker, receivedAt: sharedClock(request.receivedAtPerf) });
      }
      return script;
    },
  });
  setInterval(() => {
    const now = Date.now();
    for (const [marker, request] of unfinished) {
      if (request.finishedAtPerf !== undefined) {
        pending.push({
          marker,
          receivedAt: sharedClock(request.receivedAtPerf),
          finishedAt: sharedClock(request.finishedAtPerf),
        });
        unfinished.delete(marker);
      } else if (request.endedAt !== undefined || now - request.receivedAt > 120_000) {
        unfinished.delete(marker); // the worker went away mid-stream: no finish to report
      }
    }
    if (pending.length > 0) {
      parentPort?.postMessage({ kind: 'times', times: pending } satisfies ModelMessage);
      pending = [];
    }
  }, 20);
  parentPort?.postMessage({ kind: 'listening', url: fake.baseURL } satisfies ModelMessage);
}

async function runProxy(upstreams: string[]): Promise<void> {
  // Upstream connections are kept alive, as a load balancer's are: a connection per request
  // would charge the APIs (and this thread) a TCP accept and teardown on every POST and every
  // stream. Node's agent closes an idle socket a second before the API's advertised
  // `Keep-Alive: timeout=` runs out (so the API does not close one the proxy is about to reuse),
  // but only when the agent has a timeout of its own to shorten: hence `timeout`, which closes
  // idle sockets only (a quiet stream in use is not cut by it).
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, timeout: 60_000 });
  let next = 0;
  const server = createServer((req, res) => {
    const index = next++ % upstreams.length;
    const target = new URL(req.url ?? '/', upstreams[index]);
    const upstream = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host }, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, {
          ...answer.headers,
          [UPSTREAM_HEADER]: String(index),
        });
        // an SSE response is written as it comes: no buffering between the API and the client
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { [UPSTREAM_HEADER]: String(index) });
      res.end(`proxy: ${error.message}`);
    });
    // the client went away (a follower that gave up): so does the upstream request
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  parentPort?.postMessage({
    kind: 'listening',
    url: `http://127.0.0.1:${port}`,
  } satisfies ProxyMessage);
}

/** Starts a helper thread and resolves with it and the URL it listens on. */
export async function startThread<M extends { kind: string }>(
  role: Role,
  onMessage: (message: M) => void = () => undefined,
): Promise<{ worker: Worker; url: string }> {
  const worker = new Worker(__filename, { workerData: role });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: M & { url?: string }) => {
      if (message.kind === 'listening' && message.url) resolve(message.url);
      else onMessage(message);
    });
  });
  return { worker, url };
}

if (!isMainThread && parentPort) {
  const role = workerData as Role;
  void (role.role === 'model' ? runModel() : runProxy(role.upstreams));
}
