import { currentLogContext } from '@chronicle/platform';
import type { CommandMetadata } from '@chronicle/adventure-store';

import { requestUserId } from '../auth/request-user';

// Who is asking: the user whose API key the access guard accepted (apps/api/src/auth). What
// they create or import is theirs; the guard answers 404 for anyone else's.

/** The owner id of the request being served: the authenticated user. */
export function currentOwnerId(): string {
  return requestUserId();
}

/** Event metadata for a command the current request asks for: the actor and the request id. */
export function requestMetadata(): CommandMetadata {
  const requestId = currentLogContext().requestId;
  return {
    actor: `user:${currentOwnerId()}`,
    ...(typeof requestId === 'string' ? { correlationId: requestId } : {}),
  };
}
