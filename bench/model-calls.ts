// Which model request each benchmark turn caused: every player action carries a marker
// `[bench <player>.<turn>]`, and the prompt replays earlier actions too, so the last marker in a
// request's prompt is its turn's. The fake model's `reply` records each generation by marker.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FakeScript, RecordedRequest } from '../test/support/fake-openai-server';
import { lastMarker, promptOf } from './apps';

/** The marker a player's action text carries for its `turn`-th turn. */
export function benchMarker(player: number, turn: number): string {
  return `[bench ${player}.${turn}]`;
}

/** Model requests by marker, recorded as they arrive; each generation answered with `script`. */
export class ModelCalls {
  private readonly byMarker = new Map<string, RecordedRequest>();

  constructor(private readonly script: FakeScript) {}

  readonly reply = (request: RecordedRequest): FakeScript => {
    if (request.path === '/v1/chat/completions' || request.path === '/v1/completions') {
      const marker = lastMarker(promptOf(request.body));
      if (marker) this.byMarker.set(marker, request);
    }
    return this.script;
  };

  /** The request of `player.turn`'s marker (forgotten once taken, so the map stays small). */
  take(marker: string): RecordedRequest | undefined {
    const request = this.byMarker.get(marker);
    this.byMarker.delete(marker);
    return request;
  }
}

/**
 * A benchmark player's action, its text marked for `player`'s `turn`-th turn: when it was sent
 * and answered (this process's clock, as the fake model's), and the stream to follow.
 */
export async function postMarkedAction(
  apiUrl: string,
  headers: Record<string, string>,
  adventureId: string,
  text: string,
  player: number,
  turn: number,
): Promise<{ postedAt: number; acceptedAt: number; stream: string }> {
  const postedAt = performance.now();
  const response = await fetch(`${apiUrl}/v1/adventures/${adventureId}/actions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'do',
      text: `${text} ${benchMarker(player, turn)}`,
      id: randomUUID(),
    }),
  });
  const body = (await response.json()) as { stream?: string };
  const acceptedAt = performance.now();
  if (response.status !== 202 || !body.stream) {
    throw new Error(`POST actions: ${response.status} ${JSON.stringify(body)}`);
  }
  return { postedAt, acceptedAt, stream: body.stream };
}
