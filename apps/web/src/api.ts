// The client's only way to the server: the public HTTP API, with the player's API key as a
// bearer token. Every failure becomes an ApiError whose message is the server's own (it says
// what to fix), with the wait of a 429.

import type { Schema } from '../../../libs/client/src/index';

const KEY_STORAGE = 'chronicle.apiKey';

export function storedKey(): string | null {
  return localStorage.getItem(KEY_STORAGE);
}

export function storeKey(key: string | null): void {
  if (key === null) localStorage.removeItem(KEY_STORAGE);
  else localStorage.setItem(KEY_STORAGE, key);
}

/**
 * `npm start`'s sign-in link carries the development key in the fragment (`#key=…`), which no
 * server or proxy sees. Taken once, then removed from the address bar and the history.
 */
export function takeKeyFromFragment(): string | null {
  const match = /(?:^#|&)key=([^&]+)/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, '', location.pathname + location.search);
  return decodeURIComponent(match[1]);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds to wait before trying again (429), when the server said. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** What a person reads for a failure: the server's message, and the wait of a 429. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 429) {
      const wait = error.retryAfterSeconds;
      return wait !== null ? `${error.message} (wait ${wait} s)` : error.message;
    }
    if (error.status === 401) return `Sign in again: ${error.message}`;
    return error.message;
  }
  if (error instanceof Error) {
    return error.name === 'TypeError'
      ? `The server did not answer (${error.message})`
      : error.message;
  }
  return String(error);
}

export async function errorFrom(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { message?: string | string[] };
    if (Array.isArray(body.message)) message = body.message.join('; ');
    else if (body.message) message = body.message;
  } catch {
    // not JSON: keep the status line
  }
  const retry = response.headers.get('retry-after');
  const seconds = retry !== null && /^\d+$/.test(retry) ? Number(retry) : null;
  return new ApiError(response.status, message, seconds);
}

/** Called when the server refuses the key: the app signs out. */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export function authHeaders(key = storedKey()): Record<string, string> {
  return key ? { authorization: `Bearer ${key}` } : {};
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  options: { key?: string; contentType?: string; signal?: AbortSignal } = {},
): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(options.key ?? storedKey()) };
  let payload: BodyInit | undefined;
  if (body !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const response = await fetch(path, { method, headers, body: payload, signal: options.signal });
  if (!response.ok) {
    const error = await errorFrom(response);
    if (error.status === 401 && options.key === undefined) onUnauthorized();
    throw error;
  }
  if (response.status === 204) return undefined as T;
  const type = response.headers.get('content-type') ?? '';
  return (type.includes('json') ? await response.json() : await response.text()) as T;
}

export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body: unknown = {}) => request<T>('POST', path, body),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  del: <T>(path: string) => request<T>('DELETE', path),
};

/** Downloads the adventure's event log as the API's NDJSON export. */
export async function exportAdventure(a: { id: string; title: string }): Promise<void> {
  const response = await fetch(`/v1/adventures/${encodeURIComponent(a.id)}/export`, {
    headers: authHeaders(),
  });
  if (!response.ok) throw new Error(`export failed: ${response.status}`);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = `${(a.title || 'adventure').replace(/[^\w.-]+/g, '-')}-${a.id.slice(0, 8)}.ndjson`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function newId(): string {
  return crypto.randomUUID();
}

// The shapes the client reads. Those the API's OpenAPI document declares are its generated
// types (libs/client, regenerated with `npm run client:types`); the free-form parts the document
// leaves open (the narrative state, story cards) and the routes it does not describe yet
// (context, memories, summary) are written here.

export type AdventureSummary = Schema<'AdventureSummaryView'>;

export type AdventureList = Schema<'AdventureListView'>;

export type ActionView = Schema<'ActionView'>;

export interface StoryCard {
  id: string;
  name: string;
  keys: string;
  entry: string;
  type?: string;
  notes?: string;
}

export interface Entity {
  id: string;
  name: string;
  kind: string;
  status?: string;
  at?: string;
  holder?: string;
  desc?: string;
}

export interface NarrativeState {
  entities: Record<string, Entity>;
  facts: Array<{ text: string; about?: string[] }>;
}

export type Rejection = Schema<'RejectionView'>;

export type AdventureView = Omit<Schema<'AdventureView'>, 'narrativeState' | 'storyCards'> & {
  narrativeState: NarrativeState;
  storyCards: StoryCard[];
};

export type TurnStarted = Schema<'TurnAcceptedView'>;

/** A passage of the story a turn recalled, cited by its action, with the scores that chose it. */
export interface RecalledPassage {
  actionId: string;
  type: ActionView['type'];
  tokens: number;
  /** Its place on the story path (0 is the opening). */
  position: number;
  /** 1-based rank by its words (full text) and by its meaning (embeddings); null: not ranked. */
  lexicalRank: number | null;
  vectorRank: number | null;
  /** Reciprocal rank fusion of the two ranks. */
  fused: number;
}

export interface PassageReport {
  used: RecalledPassage[];
  /** Candidates left out because the history already holds them. */
  inHistory: number;
  budget: number;
  tokens: number;
  error?: string;
}

/** One action of the story at the head (GET …/actions/:actionId). */
export type StoryAction = Schema<'StoryActionView'>;

export interface ContextManifest {
  sections: Array<{ label: string; tokens: number; text?: string }>;
  tokens: { total: number; budget: number };
  cards: Array<{ id: string; name: string; keyword: string; included: boolean }>;
  memories: Array<{ id: string; similarity: number; pinned: boolean; text?: string }> | null;
  memoryError?: string | null;
  /** Absent when the memory bank is off. */
  passages?: PassageReport;
  history: { included: number; total: number; oldest_truncated: boolean };
  sha256?: { system: string; story: string };
}

export interface ContextPreview {
  version: number;
  system: string;
  story: string;
  report: Omit<ContextManifest, 'memories'> & {
    memories: {
      used: Array<{ id: string; text: string; similarity: number; pinned: boolean }>;
      error?: string;
    } | null;
  };
}

export interface LastContext {
  turnId: string;
  actionId: string;
  version: number;
  manifest: ContextManifest;
}

export interface MemoryView {
  id: string;
  text: string;
  pinned: boolean;
  forgotten: boolean;
  useCount: number;
  createdBy: string;
  /** The story actions it was written from (none for a hand-written memory). */
  sourceActionIds: string[];
}

/** A memory expanded to its source actions on the current path (GET …/memories/:id/sources). */
export interface MemorySources {
  memoryId: string;
  text: string;
  sources: Array<{ actionId: string; depth: number; type: ActionView['type']; text: string }>;
}

export interface SummaryView {
  summary: { id: string; text: string } | null;
}

export type LoggedEvent = Schema<'LoggedEventView'> & { data: Record<string, unknown> };

export type EventsPage = Omit<Schema<'EventsPageView'>, 'events'> & { events: LoggedEvent[] };

export interface AtVersion {
  version: number;
  head: string | null;
  narrativeState: NarrativeState;
  actions: ActionView[];
}
