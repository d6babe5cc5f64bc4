export type ExpectedVersion = number | 'no_stream' | 'any';

/**
 * The stream is not at the version the caller decided against. Callers reload and decide again;
 * one that outlasts its retries reaches the API, which answers 409 by this kind.
 */
export class StreamVersionConflictError extends Error {
  override readonly name = 'StreamVersionConflictError';
  readonly kind = 'conflict' as const;

  constructor(
    readonly streamId: string,
    readonly expectedVersion: ExpectedVersion,
    readonly actualVersion: number,
  ) {
    super(
      `stream ${streamId} is at version ${actualVersion}, not the expected ${String(expectedVersion)}: ` +
        'reload it and decide again',
    );
  }
}

/**
 * Some of the batch's event ids are already stored and some are not: this is
 * not a retry of an earlier append but a different batch reusing ids.
 */
export class EventIdReuseError extends Error {
  override readonly name = 'EventIdReuseError';
  readonly kind = 'conflict' as const;

  constructor(readonly streamId: string) {
    super(
      `stream ${streamId} already holds some, but not all, of these event ids: ` +
        'a retry must resend exactly the original batch',
    );
  }
}
