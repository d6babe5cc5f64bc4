// Domain errors carry a `kind` so one exception filter maps them all: conflict → 409,
// not_found → 404, invalid → 400, limit and unprocessable → 422, unauthorized → 401,
// forbidden → 403, gone → 410, rate_limited → 429. Only subclasses of DomainError are mapped by kind: any other object that
// happens to have a `kind` (a provider's error, say) is a 500 whose details stay in the log.
// Messages say what to fix, because they reach the player.

export type DomainErrorKind =
  | 'conflict'
  | 'not_found'
  | 'invalid'
  | 'limit'
  | 'unprocessable'
  | 'unauthorized'
  /** A member whose role does not allow what they asked (a spectator acting). */
  | 'forbidden'
  /** Something that existed and can no longer be used (an expired or used-up invite). */
  | 'gone'
  | 'rate_limited'
  /** A part the request needs (the script sandbox) cannot run now: 503, worth a retry. */
  | 'unavailable';

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
}

export class InvalidCommandError extends DomainError {
  readonly kind = 'invalid' as const;
  constructor(message: string) {
    super(message);
    this.name = 'InvalidCommandError';
  }
}

export class NotFoundError extends DomainError {
  readonly kind = 'not_found' as const;
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends DomainError {
  readonly kind = 'conflict' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

/** A count limit of LIMITS is reached (cards, memories, adventures): the message names it. */
export class LimitExceededError extends DomainError {
  readonly kind = 'limit' as const;
  constructor(message: string) {
    super(message);
    this.name = 'LimitExceededError';
  }
}

/**
 * The request is well-formed but cannot be done as asked (422): an idempotency key resent with
 * another body, a model the installation does not allow.
 */
export class UnprocessableError extends DomainError {
  readonly kind = 'unprocessable' as const;
  constructor(message: string) {
    super(message);
    this.name = 'UnprocessableError';
  }
}

/** The caller is a member, but their role (or a ban) does not allow this: 403, naming why. */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}

/** It existed and is spent (an invite expired or used up): 410, naming which. */
export class GoneError extends DomainError {
  readonly kind = 'gone' as const;
  constructor(message: string) {
    super(message);
    this.name = 'GoneError';
  }
}

/** One turn in flight per adventure: the turn must finish (or be cancelled) first. */
export class TurnInFlightError extends ConflictError {
  constructor(readonly turnId: string) {
    super(
      `turn ${turnId} is still being narrated; wait for it to finish or cancel it, then try again`,
    );
    this.name = 'TurnInFlightError';
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
