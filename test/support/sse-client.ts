// A small Server-Sent Events client over fetch, for the turn stream: it parses
// `id:`/`event:`/`data:` frames, reconnects with Last-Event-ID when the
// connection drops before the final frame, and keeps the narration text the
// way a player's screen would (a `reset` clears what was shown). Each message's `event:` and
// `data:` are decoded by libs/turn-stream's decodeFrame, the decoder the API's reader uses, so a
// frame the union does not know fails the test that reads it.
import { decodeFrame, type TurnFrame } from '@chronicle/turn-stream';

export type SseFrame = TurnFrame & {
  id?: string;
  raw: string;
};

/** Splits an SSE byte stream into frames; feed it text, it returns the complete frames. */
export class SseParser {
  private buffer = '';

  push(text: string): SseFrame[] {
    this.buffer += text.replace(/\r\n?/g, '\n');
    const frames: SseFrame[] = [];
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const frame = parseBlock(block);
      if (frame) frames.push(frame);
    }
    return frames;
  }
}

function parseBlock(block: string): SseFrame | null {
  let id: string | undefined;
  let event = 'message';
  const data: string[] = [];
  let fields = 0;
  for (const line of block.split('\n')) {
    // a comment (`: heartbeat`) keeps the connection alive and carries nothing
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    fields += 1;
    if (name === 'id') id = value;
    else if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
  }
  if (fields === 0) return null;
  if (data.length === 0 && id === undefined) return null;
  const text = data.join('\n');
  return { id, ...decodeFrame(event, text === '' ? undefined : text), raw: block };
}

export interface TurnStreamResult {
  /** every frame received, across reconnects, in order */
  frames: SseFrame[];
  /** the narration as shown at the end: chunks since the last reset */
  text: string;
  /** `done`, `error`, `stopped` (a script ended the turn), or `closed` without a final frame */
  outcome: 'done' | 'error' | 'stopped' | 'closed';
  /** the final frame's data */
  final: unknown;
  resets: number;
  connections: number;
  lastEventId?: string;
  /** the status and content-type of the first connection */
  status: number;
  contentType: string | null;
}

export interface ReadTurnStreamOptions {
  /** start after this entry (sent as the Last-Event-ID header) */
  lastEventId?: string;
  /** reconnect with Last-Event-ID when the connection drops before done/error (default true) */
  reconnect?: boolean;
  /**
   * Also reconnect, after a short wait, when a connection is answered 5xx (the API lost its
   * database or Redis for a while), as a browser's EventSource would (default false: throw).
   */
  reconnectOnServerError?: boolean;
  maxConnections?: number;
  /** give up after this long (default 60 s) */
  timeoutMs?: number;
  /** called for each frame; return true to stop reading (the result's outcome is then `closed`) */
  onFrame?: (frame: SseFrame) => boolean | void;
  signal?: AbortSignal;
  /** sent with every connection (the API key's Authorization header) */
  headers?: Record<string, string>;
}

/** Reads a turn's SSE stream until `done` or `error`, reconnecting when the connection drops. */
export async function readTurnStream(
  url: string,
  options: ReadTurnStreamOptions = {},
): Promise<TurnStreamResult> {
  const result: TurnStreamResult = {
    frames: [],
    text: '',
    outcome: 'closed',
    final: undefined,
    resets: 0,
    connections: 0,
    lastEventId: options.lastEventId,
    status: 0,
    contentType: null,
  };
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 60_000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const maxConnections = options.maxConnections ?? 20;
  let stopped = false;

  while (!stopped && result.connections < maxConnections) {
    result.connections += 1;
    const headers: Record<string, string> = {
      ...options.headers,
      accept: 'text/event-stream',
    };
    if (result.lastEventId) headers['last-event-id'] = result.lastEventId;
    let response: Response;
    try {
      response = await fetch(url, { headers, signal });
    } catch (error) {
      if (signal.aborted) throw streamError(url, result, error);
      if (options.reconnect === false) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    if (result.connections === 1) {
      result.status = response.status;
      result.contentType = response.headers.get('content-type');
    }
    if (response.status >= 500 && options.reconnectOnServerError && options.reconnect !== false) {
      await response.body?.cancel().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    if (response.status !== 200 || !response.body) {
      const body = await response.text().catch(() => '');
      throw new Error(`GET ${url}: status ${response.status} ${body}`);
    }
    const parser = new SseParser();
    const decoder = new TextDecoder();
    try {
      for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
        for (const frame of parser.push(decoder.decode(bytes, { stream: true }))) {
          if (applyFrame(result, frame)) stopped = true;
          if (options.onFrame?.(frame) === true) stopped = true;
          if (stopped) break;
        }
        if (stopped) break;
      }
    } catch (error) {
      if (signal.aborted) throw streamError(url, result, error);
      // the connection dropped: reconnect below, from the last id seen
    } finally {
      await response.body.cancel().catch(() => undefined);
    }
    if (options.reconnect === false) break;
  }
  return result;
}

/**
 * Folds one frame into what a follower has read: the frame kept, its id as the point to resume
 * from, the text with resets applied, and the outcome. True when the frame ends the turn.
 */
export function applyFrame(result: TurnStreamResult, frame: SseFrame): boolean {
  result.frames.push(frame);
  if (frame.id) result.lastEventId = frame.id;
  switch (frame.event) {
    case 'chunk':
      if (typeof frame.data?.text === 'string') result.text += frame.data.text;
      break;
    case 'reset':
      result.text = '';
      result.resets += 1;
      break;
    case 'done':
    case 'error':
    case 'stopped':
      result.outcome = frame.event;
      result.final = frame.data;
      return true;
    default:
      break;
  }
  return false;
}

function streamError(url: string, result: TurnStreamResult, cause: unknown): Error {
  const events = result.frames.map((f) => f.event).join(', ');
  return new Error(
    `SSE ${url}: no done/error in time after ${result.connections} connection(s); ` +
      `frames: [${events}]; text so far: ${JSON.stringify(result.text.slice(0, 300))} ` +
      `(${(cause as Error)?.message ?? cause})`,
  );
}
