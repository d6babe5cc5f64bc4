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
