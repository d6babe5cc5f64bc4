import { sql, type Kysely } from 'kysely';
import type { AccountsDatabase } from './accounts.database';
import { RateLimitedError } from './accounts.errors';

// A user's model tokens per UTC day, counted from what the log records: every Narrated event of
// their adventures since midnight UTC carries the provider's usage. The offline narrator costs
// nothing and is not counted. Summing the log (one index range per adventure, at most
// LIMITS.adventuresPerUser of them) keeps one truth: no counter to drift from the events.

export interface UtcDay {
  start: Date;
  resetsAt: Date;
}

export function utcDay(now: Date): UtcDay {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { start, resetsAt: new Date(start.getTime() + 24 * 60 * 60 * 1000) };
}

export class DailyTokenBudget {
  constructor(private readonly db: Kysely<AccountsDatabase>) {}

  /** Prompt and completion tokens of the user's narrations since midnight UTC. */
  async usedToday(userId: string, now: Date): Promise<number> {
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
}
