import { ModelError } from '@chronicle/llm';
import { DEFAULT_PROVIDER_PAUSE_MS } from '@chronicle/adventure';
import { providerPauseMs } from './narrate.admission';

const rateLimited = (init: { retryable: boolean; retryAfterMs?: number }) =>
  new ModelError({ kind: 'rate_limited', message: '429', ...init });

describe('providerPauseMs', () => {
  it('given a burst 429, pauses for its Retry-After, or the default without one', () => {
    expect(providerPauseMs(rateLimited({ retryable: true, retryAfterMs: 2_500 }))).toBe(2_500);
    expect(providerPauseMs(rateLimited({ retryable: true }))).toBe(DEFAULT_PROVIDER_PAUSE_MS);
  });

  it('caps a Retry-After past ten minutes: that is a cap, not a burst limit', () => {
    expect(providerPauseMs(rateLimited({ retryable: true, retryAfterMs: 86_400_000 }))).toBe(
      600_000,
    );
  });

  it('does not pause for a used-up quota (no wait fixes it) or any other error', () => {
    expect(providerPauseMs(rateLimited({ retryable: false, retryAfterMs: 1_000 }))).toBeNull();
    expect(
      providerPauseMs(new ModelError({ kind: 'server', message: '500', retryable: true })),
    ).toBeNull();
    expect(providerPauseMs(new Error('boom'))).toBeNull();
  });
});
