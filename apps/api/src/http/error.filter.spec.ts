import { ConflictError, InvalidCommandError } from '@chronicle/adventure';
import { RateLimitedError, UnauthorizedError } from '@chronicle/accounts';
import { EventIdReuseError, StreamVersionConflictError } from '@chronicle/event-store';
import { ModelError } from '@chronicle/llm';
import { answerFor } from './error.filter';

describe('the error filter answers known error classes only', () => {
  it('given domain errors, when answered, then by their kind (Retry-After for a rate limit)', () => {
    expect(answerFor(new ConflictError('busy'))).toEqual({ status: 409, message: 'busy' });
    expect(answerFor(new InvalidCommandError('bad'))).toEqual({ status: 400, message: 'bad' });
    expect(answerFor(new UnauthorizedError('key'))).toEqual({ status: 401, message: 'key' });
    expect(answerFor(new RateLimitedError('slow', 7))).toEqual({
      status: 429,
      message: 'slow',
      retryAfterSeconds: 7,
    });
  });

  it('given a version conflict that outlasted its retries, when answered, then 409 saying to resend', () => {
    const answer = answerFor(new StreamVersionConflictError('adventure-x', 3, 4));
    expect(answer).toMatchObject({ status: 409, message: expect.stringMatching(/send it again/) });
    expect(JSON.stringify(answer)).not.toContain('adventure-x');
    expect(answerFor(new EventIdReuseError('adventure-x'))).toMatchObject({ status: 409 });
  });

  it('given anything else with a `kind`, when answered, then nothing: a 500 with the details logged', () => {
    expect(answerFor(Object.assign(new Error('x'), { kind: 'conflict' }))).toBeNull();
    expect(answerFor({ kind: 'not_found', message: 'x' })).toBeNull();
    expect(
      answerFor(
        new ModelError({ kind: 'rate_limited', retryable: true, message: 'at http://10.0.0.1' }),
      ),
    ).toBeNull();
  });
});
