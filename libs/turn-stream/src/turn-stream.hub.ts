import { duplicateRedis, waitForRedis, type RedisClient } from '@chronicle/platform';
import { fromNotice, toEntry, turnStreamKey } from './turn-stream';
import { isFinal, type TurnStreamEntry } from './turn-stream.frames';

// The API's followers of unfinished turns, all on a fixed number of Redis connections. Every
// script that adds entries to a turn's stream also PUBLISHes them, in the same script, on a
// channel named as the stream (turn-stream.ts): so each entry reaches the followers the moment it
// is written, with no read to repeat. Each of `readers` connections is a subscriber; a stream
// with followers on this process is one SUBSCRIBE on one of them, dropped with its last follower.
// A follower subscribes first and then reads the stream after its point with one XRANGE: what was
// written before the subscription took is in that read, what comes after arrives as messages,
// and an entry in both is handed over once (ids only grow).
//
// An XREAD BLOCK over every followed stream did this before: it had to be sent again, naming
// every stream, each time any one of them had news, which made a turn's cost grow with the
// number of turns in flight. Pub/sub messages are not kept: when a subscriber's connection
// closes, its followers end with an error (the SSE client resumes with Last-Event-ID), as a
// failed read ended them before. On a Redis Cluster a PUBLISH reaches every node's subscribers,
// so a subscriber may sit on any node.

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
  /** Until its catch-up read has answered, live entries wait here. */
  held: TurnStreamEntry[] | null;
  error: Error | null;
  wake: (() => void) | null;
}

interface Channel {
  followers: Set<Follower>;
  /** The SUBSCRIBE, answered: from then on every entry written to the stream arrives here. */
  subscribed: Promise<void>;
}

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

function fail(follower: Follower, error: Error): void {
  follower.error = error;
  follower.wake?.();
}

class Subscriber {
  readonly channels = new Map<string, Channel>();
  private connection: RedisClient | null = null;
  private closed = false;

  constructor(
    private readonly source: RedisClient,
    private readonly name: string,
  ) {}

  get connected(): boolean {
    return this.connection !== null;
  }

  /**
   * Adds `follower` to the stream's channel and hands it, once subscribed, what the stream holds
   * after its point; live entries wait in `held` until then.
   */
  join(key: string, follower: Follower): void {
    follower.held = [];
    let channel = this.channels.get(key);
    if (!channel) {
      const connection = this.connect();
      channel = {
        followers: new Set(),
        // Only once the connection is ready: ioredis's own checks on (re)connecting are
        // commands a connection in subscriber mode may not send. Bounded (waitForRedis's 5 s): a
        // follow while Redis is away fails, as a failed read did, rather than wait without end.
        subscribed: waitForRedis(connection)
          .then(() => connection.subscribe(key))
          .then(() => {
            // Its followers all left (or failed) before the SUBSCRIBE went out: their UNSUBSCRIBE
            // went first, so this one is dropped here, unless a new follower wants the channel.
            if (!this.channels.has(key)) connection.unsubscribe(key).catch(() => undefined);
          }),
      };
      const joined = channel;
      this.channels.set(key, joined);
      // A refused SUBSCRIBE fails its followers (below); the next follower tries afresh.
      joined.subscribed.catch(() => {
        if (this.channels.get(key) === joined) this.channels.delete(key);
      });
    }
    channel.followers.add(follower);
    channel.subscribed
      .then(() => this.source.xrange(key, `(${follower.lastId}`, '+'))
      .then(
        (rows) => {
          const held = follower.held ?? [];
          follower.held = null;
          for (const row of rows) deliver(follower, toEntry(row));
          for (const entry of held) deliver(follower, entry);
        },
        (error: Error) => fail(follower, error),
      );
  }

  leave(key: string, follower: Follower): void {
    const channel = this.channels.get(key);
    if (!channel) return;
    channel.followers.delete(follower);
    if (channel.followers.size > 0) return;
    this.channels.delete(key);
    // A later join's SUBSCRIBE goes after this on the same connection, so it wins.
    this.connection?.unsubscribe(key).catch(() => undefined);
  }

  close(): void {
    this.closed = true;
    this.connection?.disconnect();
    this.connection = null;
    // Followers waiting for news end now, not when their idle timer fires.
    this.failAll(new Error('the turn stream reader is shutting down'));
  }

  private connect(): RedisClient {
    if (this.connection) return this.connection;
    const connection = duplicateRedis(this.source, {
      connectionName: this.name,
      enableAutoPipelining: false,
      maxRetriesPerRequest: null,
      // What was published while the connection was down is gone: its followers end (below) and
      // resume from the stream; a channel is subscribed again by the next follower of it.
      autoResubscribe: false,
    });
    connection.on('error', () => undefined);
    connection.on('message', (channel: string, message: string) =>
      this.onMessage(channel, message),
    );
    connection.on('close', () => {
      if (!this.closed) this.failAll(new Error('the turn stream connection to Redis closed'));
    });
    this.connection = connection;
    return connection;
  }

  private onMessage(key: string, message: string): void {
    const channel = this.channels.get(key);
    if (!channel) return;
    for (const entry of fromNotice(message)) {
      for (const follower of channel.followers) deliver(follower, entry);
    }
  }

  private failAll(error: Error): void {
    for (const [key, channel] of this.channels) {
      for (const follower of channel.followers) fail(follower, error);
      this.channels.delete(key);
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
  private readonly subscribers: Subscriber[];

  constructor(
    private readonly source: RedisClient,
    private readonly prefix: string,
    /** Subscriber connections shared by every follower (TURN_STREAM_READERS). */
    readers = 2,
  ) {
    this.subscribers = Array.from(
      { length: Math.max(1, readers) },
      // Named by the installation's prefix, so CLIENT LIST tells one installation's readers
      // from another's on a shared Redis.
      (_, index) => new Subscriber(source, `${prefix}-turn-stream-reader-${index}`),
    );
  }

  /** Subscriber connections open now (at most `readers`). */
  get connections(): number {
    return this.subscribers.filter((subscriber) => subscriber.connected).length;
  }

  /** Streams being followed now. */
  get streams(): number {
    return this.subscribers.reduce((sum, subscriber) => sum + subscriber.channels.size, 0);
  }

  /**
   * One turn's entries after `afterId`, until a final entry, the signal, or `idleMs` without
   * news. Throws when Redis fails the subscription or the catch-up read, or the subscriber's
   * connection closes.
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
    const subscriber = this.subscribers[hashOf(key) % this.subscribers.length];
    const onAbort = () => follower.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      subscriber.join(key, follower);
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
      subscriber.leave(key, follower);
    }
  }

  close(): void {
    for (const subscriber of this.subscribers) subscriber.close();
  }
}

function hashOf(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0;
  return hash >>> 0;
}
