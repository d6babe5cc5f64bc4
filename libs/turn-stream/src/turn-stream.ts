import Redis from 'ioredis';

// What a client watches while a turn is narrated: one Redis Stream per turn.
// The context worker appends `player`, `reasoning`, `chunk`, `reset`, and
// finally `done` or `error`; the API's SSE endpoint replays the stream from
// the client's Last-Event-ID, so a client that connects late or reconnects
// misses nothing. The stream is a delivery buffer, not a record: the outcome
// is in the event log, and the stream expires.

export type TurnStreamEventName = 'player' | 'reasoning' | 'chunk' | 'reset' | 'done' | 'error';

export interface TurnStreamEntry {
  /** the Redis stream entry id, used as the SSE `id:` */
  id: string;
  event: TurnStreamEventName;
  data: unknown;
}

const FINAL: ReadonlySet<TurnStreamEventName> = new Set(['done', 'error']);
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
    const key = this.key(turnId);
    const [[addError, id], [expireError]] = (await this.redis
      .multi()
      .xadd(
        key,
        'MAXLEN',
        '~',
        String(MAX_ENTRIES),
        '*',
        'event',
        event,
        'data',
        JSON.stringify(data),
      )
      .expire(key, TURN_STREAM_TTL_SECONDS)
      .exec()) as [[Error | null, string], [Error | null, number]];
    if (addError) throw addError;
    if (expireError) throw expireError;
    return id;
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
 * Follows one turn's stream from `afterId` until a final entry, the signal, or
 * `idleMs` without news. Blocking reads need their own connection, so each
 * follower duplicates the given client and closes it when done.
 */
export async function* followTurnStream(
  redis: Redis,
  prefix: string,
  turnId: string,
  options: { afterId?: string; signal?: AbortSignal; blockMs?: number; idleMs?: number } = {},
): AsyncGenerator<TurnStreamEntry> {
  const key = turnStreamKey(prefix, turnId);
  const blockMs = options.blockMs ?? 5000;
  const idleMs = options.idleMs ?? 10 * 60 * 1000;
  let lastId = options.afterId ?? '0-0';
  const reader = redis.duplicate();
  const abort = () => reader.disconnect();
  options.signal?.addEventListener('abort', abort);
  let quietSince = Date.now();
  try {
    while (!options.signal?.aborted) {
      const reply = (await reader
        .xread('COUNT', 500, 'BLOCK', blockMs, 'STREAMS', key, lastId)
        .catch((error: unknown) => {
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
    reader.disconnect();
  }
}
