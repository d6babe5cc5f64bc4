import type Redis from 'ioredis';
import { sql, type Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';
import { RateLimitedError } from './accounts.errors';

// A user's model tokens per UTC day. The log is the truth: every Narrated event of their
// adventures since midnight UTC carries the provider's usage (the offline narrator costs nothing
// and is not counted). Summing it is a join over all of the user's adventures, too much for every
// turn, so the check reads a counter in Redis (shared by every API instance) that is derived from
// the log:
// - on a miss (the first turn of the day, or Redis lost the key) the API sums the log and seeds
//   the counter with that sum;
// - the context worker adds each narration's tokens after appending it, and only to a counter
//   that exists, so a missing counter is always rebuilt from the whole log, never started at one
//   narration's tokens.
// A lost counter (Redis restarted, the key evicted) is rebuilt exactly. The counter drifts from
// the log only by a narration racing its rebuild (counted twice or not at all; at most the turns
// then in flight, once a day) and by a worker that dies between its append and its increment (not
// counted, so the rest of that day under-counts by that narration). Tomorrow's counter starts from
// the log again.

export interface UtcDay {
  start: Date;
  resetsAt: Date;
}

export function utcDay(now: Date): UtcDay {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { start, resetsAt: new Date(start.getTime() + 24 * 60 * 60 * 1000) };
}

/** A day's counter outlives the day, so a clock a little behind still finds it. */
const COUNTER_TTL_SECONDS = 2 * 24 * 60 * 60;

const ADD_IF_COUNTED = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false
`;

export class DailyTokenBudget {
  /**
   * @param redis the counters; null: every check sums the log (no Redis to share a counter in).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly redis: Redis | null = null,
    private readonly prefix = 'chronicle',
  ) {}

  /** Prompt and completion tokens of the user's narrations since midnight UTC. */
  async usedToday(userId: string, now: Date): Promise<number> {
    if (!this.redis) return this.sumFromLog(userId, now);
    const key = this.counterKey(userId, now);
    const counted = await this.redis.get(key).catch(() => undefined);
    if (counted === undefined) return this.sumFromLog(userId, now); // Redis unreachable
    if (counted !== null) return Number(counted);
    const used = await this.sumFromLog(userId, now);
    // NX: a counter another instance seeded meanwhile (and the worker may have added to) wins.
    const seeded = await this.redis
      .set(key, String(used), 'EX', COUNTER_TTL_SECONDS, 'NX')
      .catch(() => 'OK');
    if (seeded === 'OK') return used;
    const current = await this.redis.get(key).catch(() => null);
    return current === null ? used : Number(current);
  }

  /**
   * Counts a narration just appended to the log (the context worker, after its append). A day
   * without a counter yet is left alone: the next check sums the log, this narration included.
   */
  async recordNarration(userId: string, tokens: number, now: Date): Promise<void> {
    if (!this.redis || !(tokens > 0)) return;
    await this.redis.eval(
      ADD_IF_COUNTED,
      1,
      this.counterKey(userId, now),
      String(Math.round(tokens)),
    );
  }

  /** The day's tokens as the log records them: the truth the counter is derived from. */
  async sumFromLog(userId: string, now: Date): Promise<number> {
    const { start } = utcDay(now);
    const result = await sql<{ used: string | null }>`
      SELECT sum(
        coalesce((n.data -> 'usage' ->> 'promptTokens')::bigint, 0) +
        coalesce((n.data -> 'usage' ->> 'completionTokens')::bigint, 0)
      ) AS used
      FROM events c
      JOIN events n ON n.stream_id = c.stream_id AND n.type = 'Narrated' AND n.recorded_at >= ${start}
      WHERE c.type = 'AdventureCreated' AND c.data ->> 'ownerId' = ${userId}
        AND n.data ->> 'narrator' IS DISTINCT FROM 'offline'
    `.execute(this.db);
    return Number(result.rows[0]?.used ?? 0);
  }

  /**
   * Refuses a new turn once today's tokens reach the budget (0: no budget). The turn in flight
   * may overshoot it: a narration is never cut short for money.
   */
  async assertAvailable(userId: string, budget: number, now: Date): Promise<void> {
    if (budget <= 0) return;
    const used = await this.usedToday(userId, now);
    if (used < budget) return;
    const { resetsAt } = utcDay(now);
    throw new RateLimitedError(
      `daily model-token budget of ${budget} tokens is spent (${used} used today); it resets at ${resetsAt.toISOString()} (midnight UTC)`,
      (resetsAt.getTime() - now.getTime()) / 1000,
    );
  }

  private counterKey(userId: string, now: Date): string {
    return `${this.prefix}:token-budget:${userId}:${utcDay(now).start.toISOString().slice(0, 10)}`;
  }
}
