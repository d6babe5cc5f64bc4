// A turn's narration as server-sent events, for the web client and any other (a bot imports it
// from @chronicle/client). EventSource cannot send an Authorization header,
// so the stream is read with fetch and parsed here. When the connection drops before the turn's
// last frame (`done` or `error`), it is opened again with `Last-Event-ID` set to the last entry
// received: the server replays only what came after it, so no text is lost or doubled.
// Each message's `event:` and `data:` become a TurnFrame by libs/turn-stream's decodeFrame, the
// decoder the API and the tests read the stream with. The frames module is imported by its
// path, not through the library's barrel: the barrel also holds the Redis publisher and its
// Nest module, which a browser build or a bot must not pull in.
import {
  decodeFrame,
  isFinal,
  TurnFrameDecodeError,
  type TurnFrame,
} from '../../turn-stream/src/turn-stream.frames';

/** One text/event-stream message as it came: its fields, not yet read as a turn frame. */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

/** A turn frame as the client receives it; `id` is the entry id a reconnect resumes after. */
export type ReceivedFrame = TurnFrame & { id?: string };

/** The text/event-stream format, fed in pieces as they arrive (a frame may span pieces). */
export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];

  push(piece: string): SseFrame[] {
    this.buffer += piece;
    const frames: SseFrame[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A CR at the end may be the first half of a CRLF split across pieces: wait for more.
      if (newline === this.buffer.length - 1 && this.buffer.endsWith('\r')) break;
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      this.buffer = this.buffer.slice(newline + width);
      if (line === '') {
        if (this.data.length > 0 || this.event) {
          frames.push({
            ...(this.id !== undefined ? { id: this.id } : {}),
            event: this.event || 'message',
            data: this.data.join('\n'),
          });
        }
        this.id = undefined;
        this.event = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue; // a comment: the server's heartbeat
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'id') this.id = value;
      else if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    return frames;
  }
}

export interface FollowOptions {
  url: string;
  headers: Record<string, string>;
  onFrame: (frame: ReceivedFrame) => void;
  signal: AbortSignal;
  /** Called before each reconnect, with the attempt number (1 = the first reconnect). */
  onReconnect?: (attempt: number) => void;
  /** How often to try again after a broken connection before giving up. */
  maxReconnects?: number;
  fetch?: typeof fetch;
  /** A refused request (4xx): not retried; the caller shows it. */
  onRefused?: (response: Response) => Promise<Error>;
}

/**
 * Follows the stream to its last frame (`done`, `error` or `stopped`); resolves with that frame
 * (or null when aborted). A message that is not a turn frame this build knows (an unknown
 * event, data that is not JSON) rejects with decodeFrame's error: the client and the API are
 * built together, so such a message is a fault to show, not a frame to guess at.
 */
export async function followStream(options: FollowOptions): Promise<ReceivedFrame | null> {
  const fetchImpl = options.fetch ?? fetch;
  const maxReconnects = options.maxReconnects ?? 30;
  let lastEventId: string | undefined;
  for (let attempt = 0; ; attempt++) {
    if (options.signal.aborted) return null;
    if (attempt > 0) {
      if (attempt > maxReconnects) throw new Error('the stream broke off and did not come back');
      options.onReconnect?.(attempt);
      await sleep(Math.min(250 * 2 ** (attempt - 1), 3_000), options.signal);
      if (options.signal.aborted) return null;
    }
    let response: Response;
    // `cache` is a browser's (Node's fetch has no HTTP cache and its RequestInit no such field).
    const init: RequestInit & { cache?: 'no-store' } = {
      headers: {
        ...options.headers,
        accept: 'text/event-stream',
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      },
      signal: options.signal,
      cache: 'no-store',
    };
    try {
      response = await fetchImpl(options.url, init);
    } catch {
      continue; // the server is away: try again
    }
    if (!response.ok || !response.body) {
      if (response.status >= 400 && response.status < 500 && options.onRefused) {
        throw await options.onRefused(response);
      }
      continue;
    }
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const message of parser.push(value)) {
          const frame: ReceivedFrame = {
            ...decodeFrame(message.event, message.data),
            ...(message.id !== undefined ? { id: message.id } : {}),
          };
          if (message.id) lastEventId = message.id;
          options.onFrame(frame);
          if (isFinal(frame.event)) {
            void reader.cancel().catch(() => {});
            return frame;
          }
        }
      }
    } catch (error) {
      if (options.signal.aborted) return null;
      if (error instanceof TurnFrameDecodeError) {
        void reader.cancel().catch(() => {});
        throw error;
      }
      // broken mid-stream: reconnect from lastEventId
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
