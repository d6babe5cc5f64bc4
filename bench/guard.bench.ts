// What the fail-closed edge adds to every request, apart from the round trips it already made
// (key lookup, rate limit, ownership, budget: unchanged by issue 12, and in the turns bench).
// The new per-request work is pure CPU in the API process: the allow-list match, the admin-path
// canonicalisation, the security headers, the content-type check, the parameter pipe and, on a
// turn, the server-derived turn id and the request fingerprint. This measures that work for a
// POST …/actions, in process, over many requests, so the figure is not lost in the noise of a
// shared machine the way a 0.5 ms difference in the turns bench's end-to-end p50 is.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import { isAdminPath, isOpenRequest } from '../apps/api/src/auth/open-paths';
import { securityHeaders } from '../apps/api/src/http/security-headers.middleware';
import { acceptedContentTypes } from '../apps/api/src/http/request-body';
import { PathParamsPipe } from '../apps/api/src/http/path-params.pipe';
import { requestFingerprint, turnIdFor } from '../apps/api/src/adventures/turn-id';

const REQUESTS = 50_000;
const ROUNDS = 5;
const BUDGET_MS = 0.5;

export default async function guardBench(): Promise<string> {
  const adventureId = randomUUID();
  const url = `/v1/adventures/${adventureId}/actions`;
  const req = {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'content-length': '60' },
  } as unknown as Request;
  const headers = new Map<string, string>();
  const res = {
    setHeader: (name: string, value: string) => headers.set(name, value),
  } as unknown as Response;
  const pipe = new PathParamsPipe();
  const next: NextFunction = () => undefined;
  let sink = 0;

  const perRequestUs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      if (!isOpenRequest(req.method, req.url) && !isAdminPath(req.url)) sink++;
      securityHeaders(req, res, next);
      acceptedContentTypes(req, res, next);
      pipe.transform(adventureId, { type: 'param', data: 'id' });
      const clientId = adventureId; // any UUID: the cost does not depend on it
      sink += turnIdFor(adventureId, clientId).length;
      sink += requestFingerprint({ kind: 'act', type: 'do', text: 'ring the bell' }).length;
    }
    perRequestUs.push(((performance.now() - started) * 1000) / REQUESTS);
  }
  const sorted = [...perRequestUs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  const verdict = median / 1000 <= BUDGET_MS ? 'met' : '**missed**';
  return [
    '## Access guard: the CPU the fail-closed edge adds to a POST …/actions',
    '',
    `In process, ${REQUESTS.toLocaleString('en')} requests × ${ROUNDS} rounds (median of the rounds; best ${sorted[0].toFixed(2)} µs):`,
    '',
    '| measure | per request | budget | verdict |',
    '|---|---|---|---|',
    `| allow-list + admin canonicalisation + headers + content type + parameter pipe + turn id + fingerprint | ${median.toFixed(2)} µs | ≤ ${BUDGET_MS} ms added to POST → 202 p50 | ${verdict} |`,
    '',
    `_(checksum ${sink % 10})_`,
  ].join('\n');
}
