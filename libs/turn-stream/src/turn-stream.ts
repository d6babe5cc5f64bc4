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

/** A stream row as the API and the worker read it. */
export function toEntry([id, fields]: [string, string[]]): TurnStreamEntry {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, event: map.event as TurnStreamEventName, data: JSON.parse(map.data ?? 'null') };
}
