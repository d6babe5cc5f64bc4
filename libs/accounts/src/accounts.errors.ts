// Errors the API's one ErrorFilter maps by `kind`: unauthorized → 401, rate_limited → 429 with
// Retry-After. Messages say what to do, because they reach the client.

export class UnauthorizedError extends Error {
  readonly kind = 'unauthorized' as const;
  constructor(message: string) {
    super(message);
    this.name = 'UnauthorizedError';
  }
}

export class RateLimitedError extends Error {
  readonly kind = 'rate_limited' as const;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'RateLimitedError';
  }
}
