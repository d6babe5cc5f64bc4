// Every Redis key Chronicle names, in one place, because a Redis Cluster decides where a key
// lives from its name: a command or script that touches several keys (MULTI, EVAL, every BullMQ
// script) is refused with CROSSSLOT unless all of them hash to the
// same slot. Redis hashes only the part of a key inside its first `{…}` (its hash tag) when it
// has one, so the rule is:
//
//   keys that one command or script touches together carry the same hash tag, written first:
//   `{<installation>:<group>}:<rest>`; a key only ever touched alone carries none (a shared tag
//   would pile every such key onto one slot, and one node, for nothing).
//
// The installation is QUEUE_PREFIX (`chronicle`), which may hold only letters, digits, - and _,
// so no tag is ever opened by accident. The groups:
//
// | keys | tag | touched together by |
// |---|---|---|
// | a BullMQ queue's (`{chronicle:narrate}:narrate:…`) | `{<installation>:<queue>}` | every BullMQ script |
// | the reconciler's data-loss marker | the memory queue's | lives and dies with the memory jobs it guards |
// | a turn's stream, fence and last batch (`{chronicle:turns-7}:stream:<turnId>`) | `{<installation>:turns-<shard>}` | the fenced-publish scripts (each also PUBLISHes on a channel named as the stream) |
// | a provider key's limits and reservations (`{chronicle:provider-<id>}:limits`) | `{<installation>:provider-<id>}` | the provider limiter's scripts |
// | a user's leases, waiting line and last-asked times (`{chronicle:user-<id>}:leases`) | `{<installation>:user-<id>}` | the fairness scripts |
// | rate-limit counters, token budgets, memory locks, kept narrations | none | single-key scripts only |

/**
 * Turn streams are spread over this many hash tags, a turn's stream, fence and batch under one.
 * (The shards date from an API that read a shard's streams with one XREAD; a tag per turn would
 * spread them over more slots, at the price of renaming the streams in flight on an upgrade.)
 */
export const TURN_STREAM_SHARDS = 16;

/** `{<installation>:<group>}`: the hash tag every key of one group starts with. */
export function hashTag(installation: string, group: string): string {
  return `{${installation}:${group}}`;
}

/** BullMQ's `prefix` for one queue: every key of the queue shares this tag, each queue its own. */
export function queueKeyPrefix(installation: string, queue: string): string {
  return hashTag(installation, queue);
}

/** The shard of a turn's stream: stable for a turn id on every process. */
export function turnStreamShard(turnId: string): number {
  let hash = 0;
  for (let i = 0; i < turnId.length; i++) hash = (hash * 31 + turnId.charCodeAt(i)) | 0;
  return (hash >>> 0) % TURN_STREAM_SHARDS;
}

export const redisKeys = {
  /** A turn's Redis Stream (what SSE followers read). */
  turnStream: (installation: string, turnId: string): string =>
    `${hashTag(installation, `turns-${turnStreamShard(turnId)}`)}:stream:${turnId}`,
  /** The token of the attempt whose output a turn's stream takes; same tag as the stream. */
  turnFence: (installation: string, turnId: string): string =>
    `${hashTag(installation, `turns-${turnStreamShard(turnId)}`)}:fence:${turnId}`,
  /**
   * The number of the last batch the fence's holder wrote (`done:<0|1>` once its done is in), so
   * that a batch sent twice (a client's resend after a dropped connection) is written once;
   * cleared by each claim. Same tag as the stream and fence: the fenced scripts touch all three.
   */
  turnFenceBatch: (installation: string, turnId: string): string =>
    `${hashTag(installation, `turns-${turnStreamShard(turnId)}`)}:fence-batch:${turnId}`,
  /**
   * Set once by the reconciler; its absence says Redis lost its data. Tagged with the memory
   * queue so that it is lost with the memory jobs it stands for (a Redis Cluster may lose one
   * master's data and not the others').
   */
  reconcilerEpoch: (installation: string, memoryQueue: string): string =>
    `${queueKeyPrefix(installation, memoryQueue)}:reconciler-epoch`,
  rateLimit: (installation: string, bucket: string, subject: string): string =>
    `${installation}:ratelimit:${bucket}:${subject}`,
  tokenBudget: (installation: string, userId: string, day: string): string =>
    `${installation}:token-budget:${userId}:${day}`,
  memoryLock: (installation: string, adventureId: string): string =>
    `${installation}:memory-lock:${adventureId}`,
  /** A provider key's request/token counters and its reservations: one limiter script's keys. */
  providerLimits: (installation: string, providerId: string): string =>
    `${hashTag(installation, `provider-${providerId}`)}:limits`,
  providerReservations: (installation: string, providerId: string): string =>
    `${hashTag(installation, `provider-${providerId}`)}:reservations`,
  /** A user's narration leases, waiting line and last-asked times: one fairness script's keys. */
  userLeases: (installation: string, userId: string): string =>
    `${hashTag(installation, `user-${userId}`)}:leases`,
  userLine: (installation: string, userId: string): string =>
    `${hashTag(installation, `user-${userId}`)}:line`,
  userAsked: (installation: string, userId: string): string =>
    `${hashTag(installation, `user-${userId}`)}:asked`,
  /** A narration kept while Postgres could not record it (single-key reads and writes). */
  finishedNarration: (installation: string, turnId: string): string =>
    `${installation}:finished-narration:${turnId}`,
} as const;

/** The patterns that match every key of an installation (for tools and test clean-up). */
export function installationKeyPatterns(installation: string): string[] {
  return [`${installation}:*`, `{${installation}:*`];
}

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
export function hashedPart(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

/** The cluster slot of a key (CRC16-XMODEM of its hashed part, mod 16384), as CLUSTER KEYSLOT. */
export function redisKeySlot(key: string): number {
  let crc = 0;
  for (const byte of Buffer.from(hashedPart(key), 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc % 16384;
}
