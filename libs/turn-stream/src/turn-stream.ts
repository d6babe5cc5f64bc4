import Redis from 'ioredis';

// What a client watches while a turn is narrated: one Redis Stream per turn.
// The context worker appends `player`, `reasoning`, `chunk`, `reset`, and
// finally `done` or `error`; the API's SSE endpoint replays the stream from
// the client's Last-Event-ID, so a client that connects late or reconnects
// misses nothing. The stream is a delivery buffer, not a record: the outcome
// is in the event log, and the stream expires.

/**
 * `stopped {message}`: a script stopped the turn, no model call (final). `message {text}`: a
 * script's `state.message` changed. `notice {text, scriptId, hook}`: a script failed and the
 * turn went on without it (or its context change was discarded).
 */
export type TurnStreamEventName =
  'player' | 'reasoning' | 'chunk' | 'reset' | 'done' | 'error' | 'stopped' | 'message' | 'notice';

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

  fenceKey(turnId: string): string {
    return `${this.prefix}:turn-fence:${turnId}`;
  }

  /**
   * Makes `token` the attempt whose output the turn's stream takes (see FENCED_PUBLISH): from
   * here on only that attempt's entries are written. Adds `reset` when an earlier attempt may
   * have streamed (`rerun`), the stream holds anything past the player's entry, or it holds
   * nothing at all (Redis lost it, and a client may have seen an earlier attempt's chunks);
   * returns whether it did.
   */
  async claim(turnId: string, token: string, rerun: boolean): Promise<boolean> {
    const reset = await this.redis.eval(
      CLAIM,
      2,
      this.key(turnId),
      this.fenceKey(turnId),
      token,
      String(TURN_STREAM_TTL_SECONDS),
      String(MAX_ENTRIES),
      rerun ? '1' : '0',
    );
    return reset === 1;
  }

  /**
   * Writes the entries only while `token` holds the turn's fence; false (nothing written) once
   * another attempt has claimed it, or the fence is gone (Redis lost its data): that attempt
   * must stop streaming.
   */
  async publishFenced(
    turnId: string,
    token: string,
    entries: readonly { event: TurnStreamEventName; data: unknown }[],
  ): Promise<boolean> {
    if (entries.length === 0) return true;
    const written = await this.redis.eval(
      FENCED_PUBLISH,
      2,
      this.key(turnId),
      this.fenceKey(turnId),
      token,
      String(TURN_STREAM_TTL_SECONDS),
      String(MAX_ENTRIES),
      ...entries.flatMap(({ event, data }) => [event, JSON.stringify(data)]),
    );
    return written === 1;
  }

  /**
   * The winning attempt's `done`, after `before` (its script messages and notices). When another
   * attempt has claimed the stream since (this one lost its lock but its Narrated was appended
   * first), the stream is reset and given this attempt's whole text, then `before`, then `done`,
   * so the client still sees one attempt's output, all of it, after the last `reset`. Returns
   * whether it had to.
   */
  async publishDone(
    turnId: string,
    token: string,
    text: string,
    done: unknown,
    before: readonly { event: TurnStreamEventName; data: unknown }[] = [],
  ): Promise<boolean> {
    const replayed = await this.redis.eval(
      FENCED_DONE,
      2,
      this.key(turnId),
      this.fenceKey(turnId),
      token,
      String(TURN_STREAM_TTL_SECONDS),
      String(MAX_ENTRIES),
      JSON.stringify({ text }),
      JSON.stringify(done),
      ...before.flatMap(({ event, data }) => [event, JSON.stringify(data)]),
    );
    return replayed === 1;
  }

  /** Everything the stream holds now, oldest first. */
  async entries(turnId: string, afterId = '0-0'): Promise<TurnStreamEntry[]> {
    const start = afterId === '0-0' ? '-' : `(${afterId}`;
    const rows = await this.redis.xrange(this.key(turnId), start, '+');
    return rows.map(toEntry);
  }
}

// The fence: one key per turn holding the token of the attempt whose output the stream takes.
// Checked and written in the same script as the XADDs, so an attempt that lost its job's lock
// (its worker stalled, another took the job over and claimed the fence) cannot slip a chunk in
// between the check and the write. KEYS: stream, fence. ARGV: token, ttl, maxlen, ...
const CLAIM = `
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
local reset = ARGV[4] == '1'
if not reset then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  -- No entry at all, not even the player's: Redis lost the stream (a restart without its data),
  -- so whatever an earlier attempt streamed to a client is unknown here and must be voided.
  if #last == 0 then reset = true end
  if #last > 0 then
    local fields = last[1][2]
    for i = 1, #fields, 2 do
      if fields[i] == 'event' and fields[i + 1] ~= 'player' then reset = true end
    end
  end
end
if reset then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', 'reset', 'data', '{}')
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

const FENCED_PUBLISH = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
for i = 4, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[i], 'data', ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
`;

// ARGV[4]: the chunk {text} replayed when the fence moved; ARGV[5]: the done entry's data;
// ARGV[6..]: event, data pairs written before done (after the replay).
const FENCED_DONE = `
local replay = redis.call('GET', KEYS[2]) ~= ARGV[1]
if replay then
  redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', 'reset', 'data', '{}')
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', 'chunk', 'data', ARGV[4])
end
for i = 6, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', ARGV[i], 'data', ARGV[i + 1])
end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', 'done', 'data', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[2])
if replay then return 1 end
return 0
`;

export function turnStreamKey(prefix: string, turnId: string): string {
  return `${prefix}:turn-stream:${turnId}`;
}

/** A stream row as the API and the worker read it. */
export function toEntry([id, fields]: [string, string[]]): TurnStreamEntry {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, event: map.event as TurnStreamEventName, data: JSON.parse(map.data ?? 'null') };
}
