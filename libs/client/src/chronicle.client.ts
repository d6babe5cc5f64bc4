// The typed client a bot or another front-end imports: every route of the API with its path
// parameters, query, body and answer typed from the OpenAPI document (openapi.generated.ts,
// by openapi-typescript), sent by openapi-fetch; and the turn stream's follower.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi.generated';
import { followStream, type ReceivedFrame } from './turn-follower';

export type ChronicleApi = Client<paths>;

export interface ChronicleClientOptions {
  /** The API's origin, e.g. https://chronicle.example.org (empty: the page's own, in a browser) */
  baseUrl?: string;
  /** A user's API key, sent as a bearer token */
  apiKey?: string;
  fetch?: typeof fetch;
}

export interface FollowTurnOptions {
  onFrame: (frame: ReceivedFrame) => void;
  signal?: AbortSignal;
  /** Called before each reconnect (resumed with Last-Event-ID), with the attempt number. */
  onReconnect?: (attempt: number) => void;
  maxReconnects?: number;
}

export interface ChronicleClient {
  /** `api.GET('/v1/adventures/{id}', { params: { path: { id } } })` and so on, typed. */
  api: ChronicleApi;
  /**
   * Follows a turn's stream (the `stream` of a 202 answer) to its last frame, reconnecting with
   * Last-Event-ID when the connection breaks; resolves with the last frame (null if aborted).
   */
  followTurn(stream: string, options: FollowTurnOptions): Promise<ReceivedFrame | null>;
}

export function createChronicleClient(options: ChronicleClientOptions = {}): ChronicleClient {
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
  const headers: Record<string, string> = options.apiKey
    ? { authorization: `Bearer ${options.apiKey}` }
    : {};
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const api = createClient<paths>({
    baseUrl,
    headers,
    fetch: (request: Request) => fetchImpl(request),
  });
  return {
    api,
    followTurn: (stream, follow) =>
      followStream({
        url: `${baseUrl}${stream}`,
        headers,
        onFrame: follow.onFrame,
        signal: follow.signal ?? new AbortController().signal,
        onReconnect: follow.onReconnect,
        maxReconnects: follow.maxReconnects,
        fetch: fetchImpl,
        onRefused: async (response) =>
          new Error(`the turn stream was refused: ${response.status} ${await response.text()}`),
      }),
  };
}
