import { DomainError } from '@chronicle/adventure';

// Errors the API's one ErrorFilter maps by `kind` (they are DomainErrors): unauthorized → 401,
// rate_limited → 429 with Retry-After. Messages say what to do, because they reach the client.

export class UnauthorizedError extends DomainError {
  readonly kind = 'unauthorized' as const;
  constructor(message: string) {
    super(message);
    this.name = 'UnauthorizedError';
  }
}

export class RateLimitedError extends DomainError {
  readonly kind = 'rate_limited' as const;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'RateLimitedError';
  }
}
