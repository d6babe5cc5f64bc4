import Redis from 'ioredis';

// What a client watches while a turn is narrated: one Redis Stream per turn.
// The context worker appends `player`, `reasoning`, `chunk`, `reset`, and
// finally `done` or `error`; the API's SSE endpoint replays the stream from
// the client's Last-Event-ID, so a client that connects late or reconnects
// misses nothing. The stream is a delivery buffer, not a record: the outcome
// is in the event log, and the stream expires.

/**
 * `stopped {message}`: a script stopped the turn, no model call (final). `message {text}`: a
 * script's `state.message` changed.
 */
export type TurnStreamEventName =
  'player' | 'reasoning' | 'chunk' | 'reset' | 'done' | 'error' | 'stopped' | 'message';

export interface TurnStreamEntry {
  /** the Redis stream entry id, used as the SSE `id:` */
  id: string;
  event: TurnStreamEventName;
  data: unknown;
}

const FINAL: ReadonlySet<TurnStreamEventName> = new Set(['done', 'error', 'stopped']);
/** A turn's stream lives this long after its last write. */
export const TURN_STREAM_TTL_SECONDS = 3600;
const MAX_ENTRIES = 20000;

export function isFinal(event: TurnStreamEventName): boolean {
  return FINAL.has(event);
}

export class TurnStreamPublisher {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  key(turnId: string): string {
    return turnStreamKey(this.prefix, turnId);
  }

  async publish(turnId: string, event: TurnStreamEventName, data: unknown): Promise<string> {
    const [id] = await this.publishMany(turnId, [{ event, data }]);
    return id;
  }

  /**
   * Several entries in one round trip (one MULTI), in order: the context worker sends what the
   * model streamed within one tick of its event loop together.
   */
  async publishMany(
    turnId: string,
    entries: readonly { event: TurnStreamEventName; data: unknown }[],
  ): Promise<string[]> {
    if (entries.length === 0) return [];
    const key = this.key(turnId);
    const multi = this.redis.multi();
    for (const { event, data } of entries) {
      multi.xadd(
        key,
        'MAXLEN',
        '~',
        String(MAX_ENTRIES),
        '*',
        'event',
        event,
        'data',
        JSON.stringify(data),
      );
    }
    multi.expire(key, TURN_STREAM_TTL_SECONDS);
    const results = (await multi.exec()) as [Error | null, unknown][];
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
    return results.slice(0, entries.length).map(([, id]) => id as string);
  }

  /** Everything the stream holds now, oldest first. */
  async entries(turnId: string, afterId = '0-0'): Promise<TurnStreamEntry[]> {
    const start = afterId === '0-0' ? '-' : `(${afterId}`;
    const rows = await this.redis.xrange(this.key(turnId), start, '+');
    return rows.map(toEntry);
  }
}

export function turnStreamKey(prefix: string, turnId: string): string {
  return `${prefix}:turn-stream:${turnId}`;
}

function toEntry([id, fields]: [string, string[]]): TurnStreamEntry {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, event: map.event as TurnStreamEventName, data: JSON.parse(map.data ?? 'null') };
}

/**
 * Connections for blocking reads, kept between followers. An XREAD BLOCK holds its connection
 * until it answers, so each follower needs one of its own while it reads; opening one per SSE
 * request (connect, ready check, and closing it after) cost more than the reads themselves. A
 * follower takes an idle connection or duplicates the given client, and gives it back when its
 * last read has answered; one whose read was cut off (the client left) is closed instead.
 */
export class BlockingReaderPool {
  private readonly idle: Redis[] = [];
  private closed = false;

  constructor(
    private readonly source: Redis,
    /** The most idle connections kept; more followers than this at once open their own. */
    private readonly maxIdle = 32,
  ) {}

  acquire(): Redis {
    for (let reader = this.idle.pop(); reader; reader = this.idle.pop()) {
      if (reader.status === 'ready') return reader;
      reader.disconnect();
    }
    return this.source.duplicate();
  }

  /** Takes back a connection with no command in flight; anything else is closed. */
  release(reader: Redis, reusable: boolean): void {
    if (reusable && !this.closed && reader.status === 'ready' && this.idle.length < this.maxIdle) {
      this.idle.push(reader);
    } else {
      reader.disconnect();
    }
  }

  /** Connections waiting for a follower. */
  get idleCount(): number {
    return this.idle.length;
  }

  close(): void {
    this.closed = true;
    for (const reader of this.idle.splice(0)) reader.disconnect();
  }
}

/**
 * Follows one turn's stream from `afterId` until a final entry, the signal, or
 * `idleMs` without news. Blocking reads need their own connection: each
 * follower takes one from `readers` (or duplicates the given client and closes
 * it when done).
 */
export async function* followTurnStream(
  readers: Redis | BlockingReaderPool,
  prefix: string,
  turnId: string,
  options: { afterId?: string; signal?: AbortSignal; blockMs?: number; idleMs?: number } = {},
): AsyncGenerator<TurnStreamEntry> {
  const key = turnStreamKey(prefix, turnId);
  const blockMs = options.blockMs ?? 5000;
  const idleMs = options.idleMs ?? 10 * 60 * 1000;
  let lastId = options.afterId ?? '0-0';
  const pool = readers instanceof BlockingReaderPool ? readers : null;
  const reader = pool ? pool.acquire() : (readers as Redis).duplicate();
  // A read cut off by the signal leaves the connection blocked: it is closed, never reused.
  let reusable = true;
  const abort = () => {
    reusable = false;
    reader.disconnect();
  };
  options.signal?.addEventListener('abort', abort);
  let quietSince = Date.now();
  try {
    while (!options.signal?.aborted) {
      const reply = (await reader
        .xread('COUNT', 500, 'BLOCK', blockMs, 'STREAMS', key, lastId)
        .catch((error: unknown) => {
          reusable = false;
          if (options.signal?.aborted) return null;
          throw error;
        })) as [string, [string, string[]][]][] | null;
      if (!reply) {
        if (Date.now() - quietSince > idleMs) return;
        continue;
      }
      quietSince = Date.now();
      for (const row of reply[0][1]) {
        const entry = toEntry(row);
        lastId = entry.id;
        yield entry;
        if (isFinal(entry.event)) return;
      }
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    if (pool) pool.release(reader, reusable && !options.signal?.aborted);
    else reader.disconnect();
  }
}
