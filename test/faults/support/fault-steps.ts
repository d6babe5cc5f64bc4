// Small steps the fault scenarios share: waits with a bound, and injecting a fault at a chosen
// point of a turn's stream.
import type { SseFrame } from '@chronicle/testing';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** An `onFrame` that runs `inject` once, at the `count`-th frame named `event`. */
export function untilFrames(
  event: string,
  count: number,
  inject: () => void,
): (frame: SseFrame) => void {
  let seen = 0;
  return (frame) => {
    if (frame.event !== event) return;
    seen += 1;
    if (seen === count) inject();
  };
}

/** An `onFrame` and a promise that resolves at the `count`-th frame named `event`. */
export function frameReached(
  event: string,
  count: number,
): { onFrame: (frame: SseFrame) => void; reached: Promise<void> } {
  let resolve!: () => void;
  const reached = new Promise<void>((r) => (resolve = r));
  return { onFrame: untilFrames(event, count, resolve), reached };
}

/** Polls `test` every 100 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  test: () => Promise<T | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await test();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await sleep(100);
  }
  throw new Error(
    `${what}: not within ${timeoutMs} ms${last ? ` (${(last as Error).message})` : ''}`,
  );
}

/** One POST while a dependency is away, as the client saw it. */
export interface TimedAnswer {
  status: number;
  ms: number;
  retryAfter: string | null;
}

/** Sends an action and times its answer. */
export async function timedAct(
  client: {
    act(
      adventureId: string,
      inputType: 'do',
      text: string,
    ): Promise<{ status: number; headers: Headers }>;
  },
  adventureId: string,
  text: string,
): Promise<TimedAnswer> {
  const started = Date.now();
  const result = await client.act(adventureId, 'do', text);
  return {
    status: result.status,
    ms: Date.now() - started,
    retryAfter: result.headers.get('retry-after'),
  };
}

/** Each answer a 503 with Retry-After within the API's 3 s bound. */
export function expectRefusedInTime(answers: readonly TimedAnswer[]): void {
  for (const answer of answers) {
    expect(answer).toEqual({ status: 503, ms: expect.any(Number), retryAfter: expect.any(String) });
    expect(answer.ms).toBeLessThan(3_000);
  }
}
