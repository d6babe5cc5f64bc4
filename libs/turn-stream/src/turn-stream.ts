import { redisKeys, type RedisClient, RedisScript } from '@chronicle/platform';
import {
  decodeFrame,
  encodeFrame,
  type DoneFrameData,
  type FrameData,
  type TurnFrame,
  type TurnStreamEntry,
  type TurnStreamEventName,
} from './turn-stream.frames';

// What a client watches while a turn is narrated: one Redis Stream per turn, each entry one
// TurnFrame (turn-stream.frames.ts) as encodeFrame wrote it. The API's SSE endpoint replays the
// stream from the client's Last-Event-ID, so a client that connects late or reconnects misses
// nothing. The stream is a delivery buffer, not a record: the outcome is in the event log, and
// the stream expires.

/** A turn's stream lives this long after its last write. */
export const TURN_STREAM_TTL_SECONDS = 3600;
const MAX_ENTRIES = 20000;
const RESET = encodeFrame({ event: 'reset', data: {} });

export class TurnStreamPublisher {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  key(turnId: string): string {
    return turnStreamKey(this.prefix, turnId);
  }

  async publish<E extends TurnStreamEventName>(
    turnId: string,
    event: E,
    data: FrameData<E>,
  ): Promise<string> {
    const [id] = await this.publishMany(turnId, [{ event, data } as TurnFrame]);
    return id;
  }

  /**
   * Several entries in one round trip, in order, with the stream's expiry: one script (PUBLISH),
   * so as atomic as a MULTI, at one command instead of a MULTI's three more (and without the
   * client's transaction machinery, which cost the API more than the entries on every turn's
   * `player` frame).
   */
  async publishMany(turnId: string, entries: readonly TurnFrame[]): Promise<string[]> {
    if (entries.length === 0) return [];
    const ids = await PUBLISH.run(
      this.redis,
      this.key(turnId),
      String(TURN_STREAM_TTL_SECONDS),
      String(MAX_ENTRIES),
      ...entries.flatMap((frame) => {
        const { event, data } = encodeFrame(frame);
        return [event, data];
      }),
    );
    return ids as string[];
  }

  /** The fence shares the stream's hash tag: the scripts below touch both. */
  fenceKey(turnId: string): string {
    return redisKeys.turnFence(this.prefix, turnId);
  }

  /** The last batch number the fence's holder wrote (see FENCED_PUBLISH); same tag again. */
  batchKey(turnId: string): string {
    return redisKeys.turnFenceBatch(this.prefix, turnId);
  }

  /**
   * Makes `token` the attempt whose output the turn's stream takes (see FENCED_PUBLISH): from
   * here on only that attempt's entries are written. Adds `reset` when an earlier attempt may
   * have streamed (`rerun`), the stream holds anything past the player's entry, or it holds
   * nothing at all (Redis lost it, and a client may have seen an earlier attempt's chunks);
   * returns whether it did. The attempt's batches are numbered from 1 after it (publishFenced).
   */
  async claim(turnId: string, token: string, rerun: boolean): Promise<boolean> {
    const reset = await CLAIM.run(
      this.redis,
      this.key(turnId),
      this.fenceKey(turnId),
      this.batchKey(turnId),
      token,
      String(TURN_STREAM_TTL_SECONDS),
      String(MAX_ENTRIES),
      rerun ? '1' : '0',
      RESET.event,
      RESET.data,
      'player' satisfies TurnStreamEventName,
    );
    return reset === 1;
  }

  /**
   * Writes the entries only while `token` holds the turn's fence; false (nothing written) once
   * another attempt has claimed it, or the fence is gone (Redis lost its data): that attempt
   * must stop streaming.
   *
   * `batch` numbers the attempt's writes since its claim, 1, 2, 3… in the order they are sent:
   * a batch whose number the stream already holds for this attempt is not written again (true),
   * because a client re-sends a command that was in flight when its connection closed, and a
   * Redis shutting down gracefully may have run it (and kept it in its AOF) unanswered.
   */
  async publishFenced(
    turnId: string,
    token: string,
    entries: readonly TurnFrame[],
    batch: number,
  ): Promise<boolean> {
    if (entries.length === 0) return true;
    const written = await FENCED_PUBLISH.run(
      this.redis,
      this.key(turnId),
      this.fenceKey(turnId),
      this.batchKey(turnId),
      token,
      String(TURN_STREAM_TTL_SECONDS),
      String(MAX_ENTRIES),
      String(batch),
      ...entries.flatMap((frame) => {
        const { event, data } = encodeFrame(frame);
        return [event, data];
      }),
    );
    return written === 1;
  }

  /**
   * The winning attempt's `done`, after `before` (its script messages and notices). When another
   * attempt has claimed the stream since (this one lost its lock but its Narrated was appended
   * first), the stream is reset and given this attempt's whole text, then `before`, then `done`,
   * so the client still sees one attempt's output, all of it, after the last `reset`. Returns
   * whether it had to. Written once per attempt: the same done sent again (a client's resend)
   * writes nothing and answers as the first did.
   */
  async publishDone(
    turnId: string,
    token: string,
    text: string,
    done: DoneFrameData,
    before: readonly TurnFrame[] = [],
  ): Promise<boolean> {
    const chunk = encodeFrame({ event: 'chunk', data: { text } });
    const final = encodeFrame({ event: 'done', data: done });
    const replayed = await FENCED_DONE.run(
      this.redis,
      this.key(turnId),
      this.fenceKey(turnId),
      this.batchKey(turnId),
      token,
      String(TURN_STREAM_TTL_SECONDS),
      String(MAX_ENTRIES),
      RESET.event,
      RESET.data,
      chunk.event,
      chunk.data,
      final.event,
      final.data,
      ...before.flatMap((frame) => {
        const { event, data } = encodeFrame(frame);
        return [event, data];
      }),
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
// between the check and the write. Beside it, the number of the last batch the fence's holder
// wrote (`done:<replayed>` once its done is in), which makes each write idempotent: ioredis
// re-sends what was in flight when a connection closed, in order, and Redis may have run it.
// A claim clears it (a worker's lock token may come back on a later run, numbering from 1
// again); a claim re-sent is harmless, as it is answered before its attempt writes anything.
// KEYS: stream, fence, batch. ARGV: token, ttl, maxlen, then the script's own; every entry's
// fields are encodeFrame's, passed in, never spelled in Lua.
//
// Every entry a script adds is also PUBLISHed, by the same script, on a channel named as the
// stream (channels and keys are apart in Redis): the API's followers subscribe to it rather than
// read the stream again and again (turn-stream.hub.ts). One message a script, `fromNotice`'s
// format: id, event and data of each entry, a line each (data is JSON: it holds no raw newline).
const APPEND = `
local added = {}
local function append(maxlen, event, data)
  local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxlen, '*', 'event', event, 'data', data)
  added[#added + 1] = id
  added[#added + 1] = event
  added[#added + 1] = data
  return id
end
local function announce()
  if #added > 0 then redis.call('PUBLISH', KEYS[1], table.concat(added, '\\n')) end
end
`;

// A worker sends its numbered batches one after another without waiting, and they must run in
// that order: these scripts go by EVAL, never by SHA (see RedisScript).
const IN_ORDER = { inOrder: true };

// ARGV[4]: '1' on a rerun; ARGV[5], ARGV[6]: the reset frame; ARGV[7]: the player frame's name.
const CLAIM = new RedisScript(
  `${APPEND}
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
redis.call('DEL', KEYS[3])
local reset = ARGV[4] == '1'
if not reset then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  -- No entry at all, not even the player's: Redis lost the stream (a restart without its data),
  -- so whatever an earlier attempt streamed to a client is unknown here and must be voided.
  if #last == 0 then reset = true end
  if #last > 0 then
    local fields = last[1][2]
    for i = 1, #fields, 2 do
      if fields[i] == 'event' and fields[i + 1] ~= ARGV[7] then reset = true end
    end
  end
end
if reset then
  append(ARGV[3], ARGV[5], ARGV[6])
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  announce()
  return 1
end
return 0
`,
  3,
  IN_ORDER,
);

// An unfenced write (the API's frames: player, script messages, a cancel's error). KEYS: the
// stream. ARGV: ttl, maxlen, then event, data pairs. Returns the entries' ids.
const PUBLISH = new RedisScript(
  `${APPEND}
local ids = {}
for i = 3, #ARGV, 2 do
  ids[#ids + 1] = append(ARGV[2], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
announce()
return ids
`,
  1,
  IN_ORDER,
);

// ARGV[4]: the batch's number; ARGV[5..]: event, data pairs.
const FENCED_PUBLISH = new RedisScript(
  `${APPEND}
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
if last and tonumber(ARGV[4]) <= last then return 1 end
for i = 5, #ARGV, 2 do
  append(ARGV[3], ARGV[i], ARGV[i + 1])
end
redis.call('SET', KEYS[3], ARGV[4], 'EX', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[2])
announce()
return 1
`,
  3,
  IN_ORDER,
);

// ARGV[4..7]: the reset and the chunk {text} replayed when the fence moved; ARGV[8..9]: the done
// frame; ARGV[10..]: event, data pairs written before done (after the replay). A done already in
// under the fence's holder (the batch key says `done:…`) is not written again.
const FENCED_DONE = new RedisScript(
  `${APPEND}
local replay = redis.call('GET', KEYS[2]) ~= ARGV[1]
if not replay then
  local last = redis.call('GET', KEYS[3])
  if last == 'done:1' then return 1 end
  if last == 'done:0' then return 0 end
end
if replay then
  redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
  append(ARGV[3], ARGV[4], ARGV[5])
  append(ARGV[3], ARGV[6], ARGV[7])
end
for i = 10, #ARGV, 2 do
  append(ARGV[3], ARGV[i], ARGV[i + 1])
end
append(ARGV[3], ARGV[8], ARGV[9])
redis.call('EXPIRE', KEYS[1], ARGV[2])
announce()
if replay then
  redis.call('SET', KEYS[3], 'done:1', 'EX', ARGV[2])
  return 1
end
redis.call('SET', KEYS[3], 'done:0', 'EX', ARGV[2])
return 0
`,
  3,
  IN_ORDER,
);

/** A turn's stream: hash-tagged by its shard (see redisKeys), so a shard's streams share a slot. */
export function turnStreamKey(prefix: string, turnId: string): string {
  return redisKeys.turnStream(prefix, turnId);
}

/**
 * The entries one script PUBLISHed on the stream's channel (APPEND's `announce`), as `toEntry`
 * gives them from the stream itself.
 */
export function fromNotice(message: string): TurnStreamEntry[] {
  const lines = message.split('\n');
  const entries: TurnStreamEntry[] = [];
  for (let i = 0; i + 2 < lines.length; i += 3) {
    entries.push({ id: lines[i], ...decodeFrame(lines[i + 1], lines[i + 2]) });
  }
  return entries;
}

/** A stream row as the API and the worker read it: its fields decoded by `decodeFrame`. */
export function toEntry([id, fields]: [string, string[]]): TurnStreamEntry {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, ...decodeFrame(map.event, map.data) };
}
