// What a client watching a turn receives, frame by frame. One union names every frame and what it
// carries; `encodeFrame` and `decodeFrame` are the only code that turns a frame into the two
// strings a Redis stream entry (and an SSE message: `event:` and `data:`) holds, and back. The
// API writes `player`, `message`, `stopped` and a cancel's `error`; the context worker writes
// `reset`, `reasoning`, `chunk`, `message`, `stopped`, and finally `done` or `error`.

/** The player's action as the story shows it (null when the turn is a continue or a retry). */
export interface PlayerFrameAction {
  id: string;
  type: string;
  text: string;
}

/**
 * What `done` carries: the narration as stored, and the log's version after it (a `done` the API
 * makes from the log lacks the action only when the log has no text for it).
 */
export interface DoneFrameData {
  action?: { id: string; text: string; type: string };
  turnId: string;
  version: number;
  narrator?: string;
  model?: string;
}

export type TurnFrame =
  | { event: 'player'; data: { action: PlayerFrameAction | null } }
  /** Whatever an earlier attempt streamed is void: clear the narration shown so far. */
  | { event: 'reset'; data: Record<string, never> }
  | { event: 'reasoning'; data: { text: string } }
  | { event: 'chunk'; data: { text: string } }
  /** A script's `state.message` changed. */
  | { event: 'message'; data: { text: string; visibleTo?: string[] } }
  /** A script failed and the turn went on without it (or its context change was discarded). */
  | { event: 'notice'; data: { text: string; scriptId: string; hook: string } }
  | { event: 'done'; data: DoneFrameData }
  | { event: 'error'; data: { code: string; message: string; cancelled?: boolean } }
  /** A script stopped the turn before the model was called. */
  | { event: 'stopped'; data: { message: string } };

export type TurnStreamEventName = TurnFrame['event'];

/** The data a frame of `event` carries. */
export type FrameData<E extends TurnStreamEventName> = Extract<TurnFrame, { event: E }>['data'];

/** A frame as the stream holds it: `id` is the Redis stream entry id, sent as the SSE `id:`. */
export type TurnStreamEntry = TurnFrame & { id: string };

const EVENT_NAMES: ReadonlySet<string> = new Set<TurnStreamEventName>([
  'player',
  'reset',
  'reasoning',
  'chunk',
  'message',
  'notice',
  'done',
  'error',
  'stopped',
]);
const FINAL: ReadonlySet<TurnStreamEventName> = new Set(['done', 'error', 'stopped']);

/** Whether a frame ends the turn's stream. */
export function isFinal(event: TurnStreamEventName): boolean {
  return FINAL.has(event);
}

export function isTurnStreamEventName(name: string): name is TurnStreamEventName {
  return EVENT_NAMES.has(name);
}

/** A frame as the two strings a stream entry (or an SSE message) holds. */
export interface EncodedFrame {
  event: TurnStreamEventName;
  data: string;
}

export function encodeFrame(frame: TurnFrame): EncodedFrame {
  return { event: frame.event, data: JSON.stringify(frame.data) };
}

/** A frame that is not one this build writes: an unknown name, or data that is not JSON. */
export class TurnFrameDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TurnFrameDecodeError';
  }
}

export function decodeFrame(event: string | undefined, data: string | undefined): TurnFrame {
  if (event === undefined || !isTurnStreamEventName(event)) {
    throw new TurnFrameDecodeError(`unknown turn stream frame ${JSON.stringify(event)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data ?? 'null');
  } catch {
    throw new TurnFrameDecodeError(`the ${event} frame's data is not JSON`);
  }
  return { event, data: parsed } as TurnFrame;
}
