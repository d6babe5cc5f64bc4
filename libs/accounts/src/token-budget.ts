import type { ModelCallUsage } from '@chronicle/adventure';
import { FREE_MODELS } from '@chronicle/llm';
import { LruCache, redisKeys, type RedisClient, RedisScript } from '@chronicle/platform';
import { sql, type Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';
import { RateLimitedError } from './accounts.errors';
import { isUuid, KEY_CACHE_TTL_MS } from './accounts.repository';

// A user's model tokens per UTC day. The log is the truth: every event that records a model
// call's result carries its usage in `data.usage` (Narrated, MemoryWritten, SummaryWritten, and
// ModelUsageRecorded for calls with no other event: embeddings, unusable replies, a failed
// regeneration's answered chunks), and its append writes a model_calls row for it;
// `sumUserUsage` adds those up. The offline narrator and
// embedder cost nothing and are not counted, nor are events an import brought in. Summing it is a join over all of the user's adventures, too much for every
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

export interface BudgetSpent {
  budget: number;
  used: number;
  resetsAt: Date;
  /** For the operator's log and the API's 429: the figures and when it resets. */
  message: string;
}

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

const ADD_IF_COUNTED = new RedisScript(
  `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false
`,
  1,
);

/** Owners whose own budget a process remembers (see spentForOwner). */
const OWNER_BUDGET_CACHE_SIZE = 10_000;

export class DailyTokenBudget {
  /**
   * Each owner's own budget (`users.daily_token_budget`, null: the default), so a turn's check
   * reads Redis only. A change is announced (AccountChanges → `forgetOwner`); one this process
   * missed reaches it when the entry expires, as it reaches the API's key cache (KEY_CACHE_TTL_MS).
   */
  private readonly ownBudgets = new LruCache<string, { budget: number | null }>({
    capacity: OWNER_BUDGET_CACHE_SIZE,
    ttlMs: KEY_CACHE_TTL_MS,
  });
  /** Owners forgotten so far: a read under way when one is forgotten is not cached. */
  private forgets = 0;

  /**
   * @param redis the counters; null: every check sums the log (no Redis to share a counter in).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly redis: RedisClient | null = null,
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
   * Counts a model call whose usage was just appended to the log (the workers and the API, after
   * their append). A day without a counter yet is left alone: the next check sums the log, this
   * call included. Free models are not counted.
   */
  async recordSpend(userId: string, usage: ModelCallUsage, now: Date): Promise<void> {
    const tokens = usage.promptTokens + usage.completionTokens;
    if (!this.redis || !(tokens > 0) || FREE_MODELS.includes(usage.model)) return;
    await ADD_IF_COUNTED.run(this.redis, this.counterKey(userId, now), String(Math.round(tokens)));
  }

  /** The day's tokens as the log records them: the truth the counter is derived from. */
  async sumFromLog(userId: string, now: Date): Promise<number> {
    const { start, resetsAt } = utcDay(now);
    const usage = await sumUserUsage(this.db, userId, { from: start, to: resetsAt });
    return usage.promptTokens + usage.completionTokens;
  }

  /**
   * Refuses a new turn once today's tokens reach the budget (0: no budget). The turn in flight
   * may overshoot it: a narration is never cut short for money.
   */
  async assertAvailable(userId: string, budget: number, now: Date): Promise<void> {
    const spent = await this.spent(userId, budget, now);
    if (!spent) return;
    throw new RateLimitedError(spent.message, (spent.resetsAt.getTime() - now.getTime()) / 1000);
  }

  /** Today's budget when it is spent (0: no budget, never spent), or null. */
  async spent(userId: string, budget: number, now: Date): Promise<BudgetSpent | null> {
    if (budget <= 0) return null;
    const used = await this.usedToday(userId, now);
    if (used < budget) return null;
    const { resetsAt } = utcDay(now);
    return {
      budget,
      used,
      resetsAt,
      message: `daily model-token budget of ${budget} tokens is spent (${used} used today); it resets at ${resetsAt.toISOString()} (midnight UTC)`,
    };
  }

  /**
   * The same question for the owner of an adventure, under their own budget when they have one
   * (`users.daily_token_budget`) and `defaultBudget` otherwise: asked by the context worker
   * before it calls the model, since the API's check at the POST may be stale by then (turns
   * queued side by side, memory passes spending meanwhile).
   */
  async spentForOwner(
    ownerId: string,
    defaultBudget: number,
    now: Date,
  ): Promise<BudgetSpent | null> {
    const own = await this.ownBudget(ownerId);
    return this.spent(ownerId, own ?? defaultBudget, now);
  }

  /** Drops an owner's remembered budget: the next check reads it again (a change anywhere). */
  forgetOwner(ownerId: string): void {
    this.forgets += 1;
    this.ownBudgets.delete(ownerId);
  }

  private async ownBudget(ownerId: string): Promise<number | null> {
    if (!isUuid(ownerId)) return null;
    const cached = this.ownBudgets.get(ownerId);
    if (cached) return cached.budget;
    const forgetsBefore = this.forgets;
    const row = await this.db
      .selectFrom('users')
      .select('daily_token_budget')
      .where('id', '=', ownerId)
      .executeTakeFirst();
    const budget = row?.daily_token_budget ?? null;
    if (this.forgets === forgetsBefore) this.ownBudgets.set(ownerId, { budget });
    return budget;
  }

  private counterKey(userId: string, now: Date): string {
    return redisKeys.tokenBudget(this.prefix, userId, utcDay(now).start.toISOString().slice(0, 10));
  }
}

export interface UsageLine {
  model: string;
  /** narration, memory, summary, embedding or retrieval */
  purpose: string;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

export interface UsageTotals {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** One line per model and purpose, largest spend first. */
  lines: UsageLine[];
}

/**
 * Every model call a user paid for in [from, to), summed from the model_calls read model (one row
 * per paid call, written with the event that records it; see the event catalogue's `usage`): the
 * one reading of usage that the daily budget (and the cost ledger) build on. Free models (the
 * offline narrator and embedder) are left out here; imported events never had a row.
 */
export async function sumUserUsage(
  db: Kysely<Database>,
  userId: string,
  window: { from: Date; to?: Date },
): Promise<UsageTotals> {
  const to = window.to ?? new Date('9999-12-31T00:00:00Z');
  const result = await sql<{
    model: string;
    purpose: string;
    calls: string;
    prompt: string;
    completion: string;
    cached: string;
  }>`
    SELECT model, purpose, count(*) AS calls, sum(prompt_tokens) AS prompt,
      sum(completion_tokens) AS completion, sum(cached_tokens) AS cached
    FROM model_calls
    WHERE user_id = ${userId} AND recorded_at >= ${window.from} AND recorded_at < ${to}
      AND model <> ALL(${sql.val([...FREE_MODELS])}::text[])
    GROUP BY model, purpose
  `.execute(db);
  const lines = result.rows
    .map((row) => ({
      model: row.model,
      purpose: row.purpose,
      calls: Number(row.calls),
      promptTokens: Number(row.prompt),
      completionTokens: Number(row.completion),
      cachedTokens: Number(row.cached),
    }))
    .sort((a, b) => b.promptTokens + b.completionTokens - (a.promptTokens + a.completionTokens));
  return {
    promptTokens: lines.reduce((sum, line) => sum + line.promptTokens, 0),
    completionTokens: lines.reduce((sum, line) => sum + line.completionTokens, 0),
    cachedTokens: lines.reduce((sum, line) => sum + line.cachedTokens, 0),
    lines,
  };
}
