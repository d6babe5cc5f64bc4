import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { currentLogContext } from '@chronicle/platform';
import type { Request } from 'express';

// The authenticated user of the request being served. The access guard puts it on the request
// (for the @CurrentUser() parameter) and into the request's log context, so use cases deep in a
// call reach it through `requestUserId()` and every log line of the request names the user.

export interface RequestUser {
  id: string;
  name: string;
  keyId: string;
  dailyTokenBudget: number | null;
}

type WithUser = Request & { chronicleUser?: RequestUser };

export function attachRequestUser(req: Request, user: RequestUser): void {
  (req as WithUser).chronicleUser = user;
  // The store is this request's own object (see the correlation middleware); adding the id to
  // it reaches every async continuation of the request.
  currentLogContext().userId = user.id;
}

/** The user the access guard authenticated for `req`; undefined when it authenticated none. */
export function requestUserOf(req: Request): RequestUser | undefined {
  return (req as WithUser).chronicleUser;
}

/** The user id of the request being served; throws outside an authenticated request. */
export function requestUserId(): string {
  const userId = currentLogContext().userId;
  if (typeof userId !== 'string') {
    throw new Error('no authenticated user in this context: is the route behind the AccessGuard?');
  }
  return userId;
}

export const CurrentUser = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const user = context.switchToHttp().getRequest<WithUser>().chronicleUser;
  if (!user) throw new Error('no authenticated user on this request');
  return user;
});
