// The scale bench's players: each plays one adventure through the round-robin proxy (POST the
// action, follow the turn's SSE stream to `done`) and records what it was told in the history
// ledger, so the whole log can be checked at the end. A turn's sample says which API accepted
// the POST and which one served the stream, so the turns whose follower was on the other
// instance can be told apart.
import { randomUUID } from 'node:crypto';
import {
  applyFrame,
  SseParser,
  type HistoryLedger,
  type TurnStreamResult,
} from '@chronicle/testing';
import { seededRandom } from '../../libs/context/src/testing';
import { sharedClock, UPSTREAM_HEADER, type ModelMessage } from './threads';

/**
 * How long a follower waits for `done` (over every reconnect) before it counts the turn as not
 * ended, and how many connections it opens for one turn.
 */
const TURN_TIMEOUT_MS = 180_000;
const MAX_CONNECTIONS = 20;
/** How long after `done` the model thread's report of the request may take to arrive. */
const MODEL_REPORT_WAIT_MS = 2_000;

export interface TurnSample {
  /** false: the POST was not accepted, or the stream did not end in `done` */
  ok: boolean;
  /** what went wrong, when not ok */
  problem?: string;
  /** POST sent → the model request arriving at the fake model (NaN when it never arrived) */
  toModel: number;
  /** POST sent → 202 read */
  accepted: number;
  /** the model response's last byte → `done` read */
  toDone: number;
  /** the model request → its last byte (the fake's fixed latency, as measured) */
  model: number;
  /** sharedClock at `done` (or at the failure) */
  endedAt: number;
  /** the API (proxy upstream index) that accepted the POST, and the one that served the SSE */
  postedTo: string | null;
  followedOn: string | null;
  /** chunk frames the follower read, and whether their text is the whole narration */
  chunks: number;
  everyChunk: boolean;
}

/** The model thread's times by turn marker. */
export class ModelTimes {
  private readonly byMarker = new Map<string, { receivedAt: number; finishedAt?: number }>();

  readonly onMessage = (message: ModelMessage): void => {
    if (message.kind !== 'times') return;
    for (const { marker, receivedAt, finishedAt } of message.times) {
      this.byMarker.set(marker, { receivedAt, finishedAt });
    }
  };

  /** The times of a turn, once the model thread reported its end (or the wait passed). */
  async take(marker: string): Promise<{ receivedAt: number; finishedAt?: number } | undefined> {
    const deadline = Date.now() + MODEL_REPORT_WAIT_MS;
    while (this.byMarker.get(marker)?.finishedAt === undefined && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const times = this.byMarker.get(marker);
    this.byMarker.delete(marker);
    return times;
  }
}

export class ScalePlayer {
  private turns = 0;

  constructor(
    private readonly apiUrl: string,
    private readonly headers: Record<string, string>,
    private readonly model: ModelTimes,
    private readonly ledger: HistoryLedger,
    readonly index: number,
    readonly adventureId: string,
  ) {}

  async playTurn(): Promise<TurnSample> {
    const marker = `${this.index}.${++this.turns}`;
    const id = randomUUID();
    const failed = (problem: string, postedTo: string | null = null): TurnSample => ({
      ok: false,
      problem,
      toModel: NaN,
      accepted: NaN,
      toDone: NaN,
      model: NaN,
      endedAt: sharedClock(),
      postedTo,
      followedOn: null,
      chunks: 0,
      everyChunk: false,
    });
    const postedAt = sharedClock();
    let response: Response;
    try {
      response = await fetch(`${this.apiUrl}/v1/adventures/${this.adventureId}/actions`, {
        method: 'POST',
        headers: { ...this.headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'do',
          text: `read the chalk mark by the door [bench ${marker}]`,
          id,
        }),
      });
    } catch (error) {
      this.ledger.submitted({ adventureId: this.adventureId, id, status: 0 });
      const cause = (error as Error & { cause?: Error }).cause?.message;
      return failed(`POST: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
    }
    const text = await response.text().catch(() => '');
    let body: { stream?: string; turnId?: string } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not JSON (the proxy's own 502 says what the upstream connection met)
    }
    const acceptedAt = sharedClock();
    const postedTo = response.headers.get(UPSTREAM_HEADER);
    this.ledger.submitted({
      adventureId: this.adventureId,
      id,
      status: response.status,
      turnId: body.turnId,
    });
    if (response.status !== 202 || !body.stream || !body.turnId) {
      return failed(`POST: ${response.status} ${text.slice(0, 200)}`, postedTo);
    }
    const followed = await this.follow(body.stream);
    this.ledger.watched({ adventureId: this.adventureId, turnId: body.turnId, result: followed });
    const endedAt = sharedClock();
    const times = await this.model.take(marker);
    if (followed.outcome !== 'done') {
      return { ...failed(`stream ended ${followed.outcome}`, postedTo), endedAt };
    }
    const narration = (followed.final as { action?: { text?: string } } | undefined)?.action?.text;
    return {
      ok: times !== undefined,
      problem: times === undefined ? 'no model request carried its marker' : undefined,
      toModel: times ? times.receivedAt - postedAt : NaN,
      accepted: acceptedAt - postedAt,
      toDone: times?.finishedAt !== undefined ? followed.doneAt - times.finishedAt : NaN,
      model: times?.finishedAt !== undefined ? times.finishedAt - times.receivedAt : Number.NaN,
      endedAt,
      postedTo,
      followedOn: followed.upstream,
      chunks: followed.frames.filter((f) => f.event === 'chunk').length,
      everyChunk: narration !== undefined && followed.text.trim() === narration.trim(),
    };
  }

  /**
   * Reads the turn's stream through the proxy until `done` or `error`, as a browser's
   * EventSource does: a connection that drops (or a 5xx) is opened again with Last-Event-ID,
   * within TURN_TIMEOUT_MS and MAX_CONNECTIONS. Each connection goes to the API the proxy picks:
   * `upstream` is that API when every connection of the turn went to the same one, else null.
   */
  private async follow(
    path: string,
  ): Promise<TurnStreamResult & { upstream: string | null; doneAt: number }> {
    const result: TurnStreamResult & { upstream: string | null; doneAt: number } = {
      frames: [],
      text: '',
      outcome: 'closed',
      final: undefined,
      resets: 0,
      connections: 0,
      status: 0,
      contentType: null,
      upstream: null,
      doneAt: NaN,
    };
    const upstreams = new Set<string | null>();
    const deadline = Date.now() + TURN_TIMEOUT_MS;
    while (result.connections < MAX_CONNECTIONS && Date.now() < deadline) {
      result.connections += 1;
      const headers: Record<string, string> = { ...this.headers, accept: 'text/event-stream' };
      if (result.lastEventId) headers['last-event-id'] = result.lastEventId;
      try {
        const response = await fetch(`${this.apiUrl}${path}`, {
          headers,
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
        });
        if (result.connections === 1) {
          result.status = response.status;
          result.contentType = response.headers.get('content-type');
        }
        upstreams.add(response.headers.get(UPSTREAM_HEADER));
        result.upstream = upstreams.size === 1 ? [...upstreams][0] : null;
        if (response.status !== 200 || !response.body) {
          await response.body?.cancel().catch(() => undefined);
          if (response.status < 500) return result;
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        }
        const parser = new SseParser();
        const decoder = new TextDecoder();
        try {
          for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
            for (const frame of parser.push(decoder.decode(bytes, { stream: true }))) {
              if (applyFrame(result, frame)) {
                result.doneAt = sharedClock();
                return result;
              }
            }
          }
        } finally {
          await response.body.cancel().catch(() => undefined);
        }
      } catch {
        // cut or timed out: open it again from the last id while the turn's time lasts
      }
    }
    return result;
  }
}

export interface PlayOptions {
  /** how long the players play; turns still running at the end are waited for */
  seconds: number;
  /** mean think time before each action (exponential: Poisson arrivals); 0: back to back */
  thinkMeanMs: number;
  /** seconds at the start whose turns are played but not counted */
  warmupSeconds?: number;
  /** picks another series of think times (one per phase) */
  seed?: number;
}

export interface PlayResult {
  /** the turns that ended inside the counted window */
  samples: TurnSample[];
  /** every turn, the warm-up's and the late ones included */
  all: TurnSample[];
  /** the counted window, in seconds */
  seconds: number;
  turnsPerSecond: number;
}

/** Every player plays until the deadline; bounded by it (and by each stream's timeout). */
export async function play(players: ScalePlayer[], options: PlayOptions): Promise<PlayResult> {
  const started = sharedClock();
  const windowStart = started + (options.warmupSeconds ?? 0) * 1000;
  const deadline = windowStart + options.seconds * 1000;
  const all: TurnSample[] = [];
  await Promise.all(
    players.map(async (player) => {
      // the same think times on every run, different for each player
      const random = seededRandom(player.index + 1 + (options.seed ?? 0) * 100_003);
      while (sharedClock() < deadline) {
        if (options.thinkMeanMs > 0) {
          const think = -Math.log(1 - random()) * options.thinkMeanMs;
          if (sharedClock() + think >= deadline) break;
          await new Promise((resolve) => setTimeout(resolve, think));
        }
        const sample = await player.playTurn();
        all.push(sample);
        // A turn whose stream never ended may still be in flight: its player's next action
        // would only be refused (409). The player stops for this phase, as one would wait.
        if (!sample.ok && sample.problem?.startsWith('stream')) break;
      }
    }),
  );
  const samples = all.filter((s) => s.endedAt >= windowStart && s.endedAt <= deadline);
  const seconds = (Math.min(deadline, sharedClock()) - windowStart) / 1000;
  return { samples, all, seconds, turnsPerSecond: samples.length / seconds };
}
