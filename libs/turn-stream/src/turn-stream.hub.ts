import type { Cluster, Redis } from 'ioredis';
import {
  duplicateRedis,
  isClusterClient,
  redisKeySlot,
  TURN_STREAM_SHARDS,
  turnStreamShard,
  waitForRedis,
  type RedisClient,
} from '@chronicle/platform';
import { toEntry, turnStreamKey } from './turn-stream';
import { isFinal, type TurnStreamEntry } from './turn-stream.frames';

// The API's followers of unfinished turns, all on a fixed number of Redis connections. An XREAD
// BLOCK holds its connection until it answers, so a connection per follower would make 1,000
// watchers 1,000 connections. Instead each of `readers` connections runs one loop: a single
// XREAD BLOCK over every stream its followers watch, each from the point it has read to, and
// hands what arrives to every follower of that stream. A follower of a stream the loop is not yet
// reading wakes the blocked read (CLIENT UNBLOCK, from the command connection) so the next read
// includes it. A follower that joins a stream behind the loop's point catches up with one XRANGE.
// So N followers on one instance use `readers` blocking connections, plus the shared command one.
//
// On a Redis Cluster one XREAD may only name streams of one slot, so there the loops are one per
// turn-stream shard (TURN_STREAM_SHARDS, each shard one hash tag, see redisKeys): up to that many
// blocking connections, started as their shards get followers, whatever `readers` says. A
// cluster's CLIENT ID and CLIENT UNBLOCK are per node: the loop asks the node that serves its
// shard's slot, and unblocks through the command connection's link to that same node.

/** Stream ids compare as (milliseconds, sequence). */
export function compareEntryIds(a: string, b: string): number {
  const [am, as = '0'] = a.split('-');
  const [bm, bs = '0'] = b.split('-');
  if (am !== bm) return am.length !== bm.length ? am.length - bm.length : am < bm ? -1 : 1;
  if (as === bs) return 0;
  return as.length !== bs.length ? as.length - bs.length : as < bs ? -1 : 1;
}

interface Follower {
  /** The last id handed to (or skipped for) this follower. */
  lastId: string;
  queue: TurnStreamEntry[];
  /** While an XRANGE catch-up runs, live entries wait here. */
  held: TurnStreamEntry[] | null;
  error: Error | null;
  wake: (() => void) | null;
}

interface Subscription {
  /** The last id the loop has read from this stream. */
  cursor: string;
  followers: Set<Follower>;
}

const READ_COUNT = 500;
const BLOCK_MS = 5_000;
const RETRY_MS = 250;

function deliver(follower: Follower, entry: TurnStreamEntry): void {
  if (follower.held) {
    follower.held.push(entry);
    return;
  }
  if (compareEntryIds(entry.id, follower.lastId) <= 0) return;
  follower.lastId = entry.id;
  follower.queue.push(entry);
  follower.wake?.();
}

class ReaderLoop {
  readonly subscriptions = new Map<string, Subscription>();
  private reader: RedisClient | null = null;
  private clientId: number | null = null;
  /** Sends CLIENT UNBLOCK to the node the blocked read is on. */
  private unblockVia: (clientId: number) => Promise<unknown>;
  /** A cluster node's CLIENT ID for this loop's reader, until the node's link closes. */
  private readonly nodeIds = new WeakMap<Redis, number>();
  /** Counts XREADs sent; the one in flight is `reads` while `blocked`. */
  private reads = 0;
  private blocked = false;
  private running = false;
  private closed = false;
  private idle: (() => void) | null = null;

  constructor(
    private readonly source: RedisClient,
    private readonly name: string,
  ) {
    this.unblockVia = (clientId) => this.source.client('UNBLOCK', clientId);
  }

  get connected(): boolean {
    return this.reader !== null;
  }

  add(key: string, follower: Follower): Subscription {
    let subscription = this.subscriptions.get(key);
    if (!subscription) {
      subscription = { cursor: follower.lastId, followers: new Set() };
      this.subscriptions.set(key, subscription);
      this.interrupt();
    }
    subscription.followers.add(follower);
    if (!this.running) void this.run();
    return subscription;
  }

  remove(key: string, follower: Follower): void {
    const subscription = this.subscriptions.get(key);
    if (!subscription) return;
    subscription.followers.delete(follower);
    // The read in flight may still name it; what it brings for the key is dropped.
    if (subscription.followers.size === 0) this.subscriptions.delete(key);
  }

  close(): void {
    this.closed = true;
    this.idle?.();
    this.reader?.disconnect();
    this.reader = null;
    // Followers waiting for news end now, not when their idle timer fires.
    this.fail(new Error('the turn stream reader is shutting down'));
  }

  /** Make the loop's next read include a new stream now, not when the blocked one times out. */
  private interrupt(): void {
    if (this.idle) {
      this.idle();
      return;
    }
    if (!this.blocked || this.clientId === null) return;
    const read = this.reads;
    const clientId = this.clientId;
    void (async () => {
      // The read may not have reached Redis yet (UNBLOCK answers 0): ask again until it has
      // been unblocked or has answered by itself.
      for (let tries = 0; tries < 50 && this.blocked && this.reads === read; tries++) {
        const unblocked = await this.unblockVia(clientId).catch(() => 0);
        if (unblocked === 1) return;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
  }

  private connect(): RedisClient {
    const reader = duplicateRedis(this.source, {
      connectionName: this.name,
      enableAutoPipelining: false,
      maxRetriesPerRequest: null,
    });
    reader.on('error', () => undefined);
    // A cluster's client ids are per node: see `blockOn`.
    if (isClusterClient(reader)) return reader;
    reader.on('ready', () => {
      reader.client('ID').then(
        (id) => {
          if (this.reader === reader) this.clientId = Number(id);
        },
        () => undefined,
      );
    });
    reader.on('close', () => {
      if (this.reader === reader) this.clientId = null;
    });
    return reader;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed) {
        if (this.subscriptions.size === 0) {
          await new Promise<void>((resolve) => (this.idle = resolve));
          this.idle = null;
          continue;
        }
        this.reader ??= this.connect();
        const keys = [...this.subscriptions.keys()];
        const cursors = keys.map((key) => this.subscriptions.get(key)!.cursor);
        let reply: [string, [string, string[]][]][] | null;
        this.reads++;
        this.blocked = true;
        try {
          if (isClusterClient(this.reader)) await this.blockOn(this.reader, keys[0]);
          reply = (await this.reader.xread(
            'COUNT',
            READ_COUNT,
            'BLOCK',
            BLOCK_MS,
            'STREAMS',
            ...keys,
            ...cursors,
          )) as [string, [string, string[]][]][] | null;
        } catch (error) {
          this.blocked = false;
          if (this.closed) return;
          if (/UNBLOCKED/.test((error as Error).message)) continue;
          this.fail(error as Error);
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          continue;
        }
        this.blocked = false;
        for (const [key, rows] of reply ?? []) {
          const subscription = this.subscriptions.get(key);
          if (!subscription) continue;
          for (const row of rows) {
            const entry = toEntry(row);
            subscription.cursor = entry.id;
            for (const follower of subscription.followers) deliver(follower, entry);
          }
        }
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * On a cluster: learns which node will hold the coming XREAD (the master of the keys' slot)
   * and this reader's client id there, so `interrupt` can unblock it.
   */
  private async blockOn(reader: Cluster, key: string): Promise<void> {
    this.clientId = null;
    await waitForRedis(reader, BLOCK_MS);
    const address = reader.slots[redisKeySlot(key)]?.[0];
    const sameNode = (node: Redis) => `${node.options.host}:${node.options.port}` === address;
    const node = reader.nodes('master').find(sameNode);
    if (!address || !node) throw new Error(`no Redis Cluster master serves the slot of ${key}`);
    let id = this.nodeIds.get(node);
    if (id === undefined) {
      id = Number(await node.client('ID'));
      this.nodeIds.set(node, id);
      node.once('close', () => this.nodeIds.delete(node));
    }
    this.clientId = id;
    const source = this.source as Cluster;
    this.unblockVia = async (clientId) => {
      const peer = source.nodes('master').find(sameNode);
      return peer ? peer.client('UNBLOCK', clientId) : 0;
    };
  }

  /** A read that failed (Redis unreachable): its followers end with the error. */
  private fail(error: Error): void {
    for (const [key, subscription] of this.subscriptions) {
      for (const follower of subscription.followers) {
        follower.error = error;
        follower.wake?.();
      }
      this.subscriptions.delete(key);
    }
  }
}

export interface FollowOptions {
  /** Entries after this id (default: the whole stream). */
  afterId?: string;
  signal?: AbortSignal;
  /** Ends the follow after this long without an entry (the caller then asks the log). */
  idleMs?: number;
}

export class TurnStreamHub {
  private readonly loops: ReaderLoop[];

  constructor(
    private readonly source: RedisClient,
    private readonly prefix: string,
    /** Blocking connections shared by every follower (TURN_STREAM_READERS; a cluster: a loop per shard). */
    readers = 2,
  ) {
    this.loops = Array.from(
      { length: isClusterClient(source) ? TURN_STREAM_SHARDS : Math.max(1, readers) },
      // Named by the installation's prefix, so CLIENT LIST tells one installation's readers
      // from another's on a shared Redis.
      (_, index) => new ReaderLoop(source, `${prefix}-turn-stream-reader-${index}`),
    );
  }

  /** Blocking connections open now (at most `readers`). */
  get connections(): number {
    return this.loops.filter((loop) => loop.connected).length;
  }

  /** Streams being followed now. */
  get streams(): number {
    return this.loops.reduce((sum, loop) => sum + loop.subscriptions.size, 0);
  }

  /**
   * One turn's entries after `afterId`, until a final entry, the signal, or `idleMs` without
   * news. Throws when Redis fails the shared read.
   */
  async *follow(turnId: string, options: FollowOptions = {}): AsyncGenerator<TurnStreamEntry> {
    const key = turnStreamKey(this.prefix, turnId);
    const idleMs = options.idleMs ?? 10 * 60 * 1000;
    const signal = options.signal;
    const follower: Follower = {
      lastId: options.afterId ?? '0-0',
      queue: [],
      held: null,
      error: null,
      wake: null,
    };
    // On a cluster, loop i reads shard i only: one slot per XREAD.
    const loop = isClusterClient(this.source)
      ? this.loops[turnStreamShard(turnId)]
      : this.loops[hashOf(key) % this.loops.length];
    const onAbort = () => follower.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      const subscription = loop.add(key, follower);
      if (compareEntryIds(follower.lastId, subscription.cursor) < 0) {
        // Behind the loop's point: what lies between comes from one XRANGE; live entries wait.
        follower.held = [];
        const rows = await this.source.xrange(key, `(${follower.lastId}`, subscription.cursor);
        const held = follower.held;
        follower.held = null;
        for (const entry of rows.map(toEntry)) deliver(follower, entry);
        for (const entry of held) deliver(follower, entry);
      }
      let quietSince = Date.now();
      while (!signal?.aborted) {
        const entry = follower.queue.shift();
        if (entry) {
          quietSince = Date.now();
          yield entry;
          if (isFinal(entry.event)) return;
          continue;
        }
        if (follower.error) throw follower.error;
        const left = idleMs - (Date.now() - quietSince);
        if (left <= 0) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          follower.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        follower.wake = null;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      loop.remove(key, follower);
    }
  }

  close(): void {
    for (const loop of this.loops) loop.close();
  }
}

function hashOf(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0;
  return hash >>> 0;
}
