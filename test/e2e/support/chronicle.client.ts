/* eslint-disable @typescript-eslint/no-explicit-any -- the tests assert on response bodies; typing them would restate the contract the tests check */
// A thin HTTP client for the contract in docs/events.md, as a player's app
// would use it. It asserts nothing: the tests do, on what it returns.
import { randomUUID } from 'node:crypto';
import {
  installationKeysFor,
  readTurnStream,
  type ReadTurnStreamOptions,
  type TurnStreamResult,
} from '@chronicle/testing';

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface TurnAccepted {
  turnId: string;
  actionId: string;
  version: number;
  stream: string;
}

export interface StoredEvent {
  type: string;
  data: any;
  version?: number;
  [key: string]: unknown;
}

export type ActionType = 'do' | 'say' | 'story' | 'continue';

export interface PlayedTurn {
  accepted: TurnAccepted;
  stream: TurnStreamResult;
}

/** How many times `play` sends one action that is answered 503. */
const PLAY_SENDS = 3;

export class ChronicleClient {
  constructor(
    readonly baseUrl: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  /**
   * The Authorization header for `path`: the admin key on /v1/admin, the harness's player key
   * elsewhere, unless the client was given its own.
   */
  authorization(path: string): Record<string, string> {
    const keys = installationKeysFor(this.baseUrl);
    if (!keys || Object.keys(this.headers).some((h) => h.toLowerCase() === 'authorization')) {
      return {};
    }
    const key = path.startsWith('/v1/admin') ? keys.adminKey : keys.playerKey;
    return { authorization: `Bearer ${key}` };
  }

  async request<T = any>(method: string, path: string, body?: unknown): Promise<HttpResult<T>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...this.authorization(path),
        ...this.headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

  /** The request, failing with the route, status and body unless the status is `expected`. */
  async expect<T = any>(
    expected: number,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<HttpResult<T>> {
    const result = await this.request<T>(method, path, body);
    if (result.status !== expected) {
      throw new Error(
        `${method} ${path}: expected ${expected}, got ${result.status} ${JSON.stringify(result.body)}`,
      );
    }
    return result;
  }

  async createAdventure(body: Record<string, unknown>): Promise<string> {
    const { body: created } = await this.expect<{ id: string; version: number }>(
      201,
      'POST',
      '/v1/adventures',
      body,
    );
    return created.id;
  }

  act(adventureId: string, type: ActionType, text: string, id: string = randomUUID()) {
    // continue writes no player action: its text is left out rather than sent empty
    const body = type === 'continue' && text === '' ? { type, id } : { type, text, id };
    return this.request<TurnAccepted>('POST', `/v1/adventures/${adventureId}/actions`, body);
  }

  /**
   * Acts (expecting 202) and reads the turn's stream to its end. A 503 is the server saying "not
   * now" (a statement past its bound on a loaded database, with Retry-After): as a player's app
   * does, the same action is sent again under the same id, which the server takes at most once.
   */
  async play(
    adventureId: string,
    type: ActionType,
    text: string,
    id: string = randomUUID(),
  ): Promise<PlayedTurn> {
    let result = await this.act(adventureId, type, text, id);
    for (let sent = 1; result.status === 503 && sent < PLAY_SENDS; sent++) {
      const seconds = Math.min(Number(result.headers.get('retry-after')) || 1, 5);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      result = await this.act(adventureId, type, text, id);
    }
    if (result.status !== 202) {
      throw new Error(
        `POST /v1/adventures/${adventureId}/actions (${type}): expected 202, got ${result.status} ${JSON.stringify(result.body)}`,
      );
    }
    return { accepted: result.body, stream: await this.follow(result.body) };
  }

  async retry(adventureId: string): Promise<PlayedTurn> {
    const { body } = await this.expect<TurnAccepted>(
      202,
      'POST',
      `/v1/adventures/${adventureId}/retry`,
      {},
    );
    return { accepted: body, stream: await this.follow(body) };
  }

  undo(adventureId: string) {
    return this.request('POST', `/v1/adventures/${adventureId}/undo`, {});
  }

  redo(adventureId: string) {
    return this.request('POST', `/v1/adventures/${adventureId}/redo`, {});
  }

  editAction(adventureId: string, actionId: string, text: string) {
    return this.request('PATCH', `/v1/adventures/${adventureId}/actions/${actionId}`, { text });
  }

  eraseAction(adventureId: string, actionId: string) {
    return this.request('DELETE', `/v1/adventures/${adventureId}/actions/${actionId}`);
  }

  turn(adventureId: string, turnId: string) {
    return this.request('GET', `/v1/adventures/${adventureId}/turns/${turnId}`);
  }

  streamUrl(turn: Pick<TurnAccepted, 'stream'>): string {
    return `${this.baseUrl}${turn.stream}`;
  }

  follow(
    turn: Pick<TurnAccepted, 'stream'>,
    options: ReadTurnStreamOptions = {},
  ): Promise<TurnStreamResult> {
    return readTurnStream(this.streamUrl(turn), {
      timeoutMs: 90_000,
      ...options,
      headers: { ...this.authorization(turn.stream), ...this.headers, ...options.headers },
    });
  }

  /** The whole event log of an adventure, paging with `after` until a short page. */
  async events(adventureId: string): Promise<StoredEvent[]> {
    const all: StoredEvent[] = [];
    const limit = 500;
    let after: number | undefined;
    for (let page = 0; page < 100; page++) {
      const query = `limit=${limit}${after === undefined ? '' : `&after=${after}`}`;
      const { body } = await this.expect(
        200,
        'GET',
        `/v1/adventures/${adventureId}/events?${query}`,
      );
      const events = eventList(body);
      all.push(...events);
      if (events.length < limit) break;
      const last = events[events.length - 1];
      const next = (body as { next?: unknown })?.next;
      after = typeof next === 'number' ? next : Number(last.version);
    }
    return all;
  }
}

/** The page's events, whether the route answers a list or `{events: [...]}`. */
function eventList(body: unknown): StoredEvent[] {
  if (Array.isArray(body)) return body as StoredEvent[];
  const b = body as Record<string, unknown> | undefined;
  for (const key of ['events', 'items', 'data']) {
    if (b && Array.isArray(b[key])) return b[key] as StoredEvent[];
  }
  throw new Error(`GET …/events: expected a list of events, got ${JSON.stringify(body)}`);
}

export function ofType(events: StoredEvent[], type: string): StoredEvent[] {
  return events.filter((e) => e.type === type);
}
