import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { withLogContext } from '@chronicle/platform';
import type { NextFunction, Request, Response } from 'express';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

/** When the request being served arrived (epoch ms): a turn's latency is measured from it. */
const receivedAt = new AsyncLocalStorage<number>();

/** Every request gets a correlation id (the client's X-Request-Id when sane), echoed and logged. */
export function correlate(req: Request, res: Response, next: NextFunction): void {
  const offered = req.header('x-request-id');
  const requestId = offered && REQUEST_ID.test(offered) ? offered : randomUUID();
  res.setHeader('X-Request-Id', requestId);
  receivedAt.run(Date.now(), () => withLogContext({ requestId }, next));
}

/** Epoch ms the request being served arrived; undefined outside a request. */
export function requestReceivedAt(): number | undefined {
  return receivedAt.getStore();
}
