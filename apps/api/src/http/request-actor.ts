import { currentLogContext } from '@chronicle/platform';
import type { CommandMetadata } from '@chronicle/adventure-store';

// Who is asking. Until accounts arrive (issue 8) every request plays as the one local owner;
// this is the single seam issue 8 replaces with the authenticated user.

export const LOCAL_OWNER_ID = 'local';

/** The owner id of the request being served. */
export function currentOwnerId(): string {
  return LOCAL_OWNER_ID;
}

/** Event metadata for a command the current request asks for: the actor and the request id. */
export function requestMetadata(): CommandMetadata {
  const requestId = currentLogContext().requestId;
  return {
    actor: `user:${currentOwnerId()}`,
    ...(typeof requestId === 'string' ? { correlationId: requestId } : {}),
  };
}
