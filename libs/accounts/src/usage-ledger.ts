import { ADVENTURE_STREAM_PREFIX, adventureStreamId, DomainError } from '@chronicle/adventure';
import { FREE_MODELS } from '@chronicle/llm';
import { costOf, priceOf, type ModelPriceTable } from '@chronicle/platform';
import { sql, type Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';

// The cost ledger: every model call the log records (the usage on Narrated, MemoryWritten,
// SummaryWritten and ModelUsageRecorded events, one model_calls row each, written with the
// event), summed per day, adventure, model or user and priced from the price table. Tokens are
// stored, not prices: a changed price table re-prices the whole history on the next read.

export type UsageGroupBy = 'day' | 'adventure' | 'model' | 'user' | 'member';
export const USER_USAGE_GROUPS: readonly UsageGroupBy[] = ['day', 'adventure', 'model'];
export const ADMIN_USAGE_GROUPS: readonly UsageGroupBy[] = ['day', 'adventure', 'model', 'user'];
/** One room's ledger (GET /v1/adventures/:id/usage): by member first. */
export const ROOM_USAGE_GROUPS: readonly UsageGroupBy[] = ['member', 'day', 'model'];

export interface UsageQuery {
  /** null: every user (the operator's ledger) */
  userId: string | null;
  from: Date;
  to: Date;
  groupBy: UsageGroupBy;
  /** One adventure's calls only (a room's ledger), whoever was charged. */
  adventureId?: string;
}

export interface UsageTokens {
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** cachedTokens ÷ promptTokens (0 without prompt tokens) */
  cachedShare: number;
  /** USD, from the price table; the tokens of unpriced models are counted but cost nothing here */
  cost: number;
}

export interface UsageGroup extends UsageTokens {
  key: string;
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: UsageGroupBy;
  currency: 'USD';
  totals: UsageTokens;
  groups: UsageGroup[];
  /** Models that were called but are not in the price table (their cost is left out). */
  unpricedModels: string[];
}

interface LedgerRow {
  key: string;
  model: string;
  calls: string;
  prompt: string;
  completion: string;
  cached: string;
}

/**
 * The log's model calls in [from, to), by `groupBy` and model, as the ledger's rows. By member
 * (a room's ledger), a call's tokens are split evenly among the members it answered (a call that
 * answered none, a memory pass say, is its payer's, the host's), rounded to whole tokens per
 * group; `calls` then counts a shared call once for each of its members.
 */
async function ledgerRows(db: Kysely<Database>, query: UsageQuery): Promise<LedgerRow[]> {
  const byMember = query.groupBy === 'member';
  const key = {
    day: sql`to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
    adventure: sql`substr(stream_id, ${ADVENTURE_STREAM_PREFIX.length + 1})`,
    model: sql`model`,
    user: sql`user_id`,
    member: sql`m.member`,
  }[query.groupBy];
  const owner = query.userId === null ? sql`` : sql`AND user_id = ${query.userId}`;
  const room =
    query.adventureId === undefined
      ? sql``
      : sql`AND stream_id = ${adventureStreamId(query.adventureId)}`;
  const members = byMember
    ? sql`CROSS JOIN LATERAL unnest(coalesce(members, ARRAY[user_id])) AS m(member)`
    : sql``;
  const share = byMember ? sql`::numeric / cardinality(coalesce(members, ARRAY[user_id]))` : sql``;
  // The same calls as sumUserUsage counts for the daily budget (the model_calls read model):
  // free models (the offline narrator and embedder) are not spending.
  const result = await sql<LedgerRow>`
    SELECT ${key} AS key, model, count(*) AS calls, round(sum(prompt_tokens${share})) AS prompt,
      round(sum(completion_tokens${share})) AS completion, round(sum(cached_tokens${share})) AS cached
    FROM model_calls ${members}
    WHERE recorded_at >= ${query.from} AND recorded_at < ${query.to} ${owner} ${room}
      AND model <> ALL(${sql.val([...FREE_MODELS])}::text[])
    GROUP BY 1, model
  `.execute(db);
  return result.rows;
}

/**
 * A member's model tokens (prompt and completion) in one room in [from, to): their even share of
 * each paid call that answered their actions. What the per-player daily cap holds them to.
 */
export async function memberTokensIn(
  db: Kysely<Database>,
  adventureId: string,
  memberId: string,
  window: { from: Date; to: Date },
): Promise<number> {
  const result = await sql<{ tokens: string | null }>`
    SELECT sum((prompt_tokens + completion_tokens)::numeric / cardinality(members)) AS tokens
    FROM model_calls
    WHERE stream_id = ${adventureStreamId(adventureId)} AND members IS NOT NULL
      AND recorded_at >= ${window.from} AND recorded_at < ${window.to}
      AND ${memberId} = ANY(members)
      AND model <> ALL(${sql.val([...FREE_MODELS])}::text[])
  `.execute(db);
  return Math.round(Number(result.rows[0]?.tokens ?? 0));
}

function emptyTokens(): UsageTokens {
  return {
    calls: 0,
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    cachedShare: 0,
    cost: 0,
  };
}

/** The ledger for `query`, priced from `prices`; groups in key order (days ascending). */
export async function usageReport(
  db: Kysely<Database>,
  query: UsageQuery,
  prices: ModelPriceTable,
): Promise<UsageReport> {
  const rows = await ledgerRows(db, query);
  const groups = new Map<string, UsageGroup>();
  const totals = emptyTokens();
  const unpriced = new Set<string>();
  for (const row of rows) {
    const tokens = {
      promptTokens: Number(row.prompt),
      completionTokens: Number(row.completion),
      cachedTokens: Number(row.cached),
    };
    const price = priceOf(prices, row.model);
    if (!price) unpriced.add(row.model);
    const cost = price ? costOf(price, tokens) : 0;
    let group = groups.get(row.key);
    if (!group) groups.set(row.key, (group = { key: row.key, ...emptyTokens() }));
    for (const into of [group, totals]) {
      into.calls += Number(row.calls);
      into.promptTokens += tokens.promptTokens;
      into.cachedTokens += tokens.cachedTokens;
      into.completionTokens += tokens.completionTokens;
      into.cost += cost;
    }
  }
  const finish = <T extends UsageTokens>(t: T): T => ({
    ...t,
    cachedShare: t.promptTokens > 0 ? t.cachedTokens / t.promptTokens : 0,
    // to 1e-10 USD: sums of many small calls otherwise print as float noise
    cost: Math.round(t.cost * 1e10) / 1e10,
  });
  return {
    from: query.from.toISOString(),
    to: query.to.toISOString(),
    groupBy: query.groupBy,
    currency: 'USD',
    totals: finish(totals),
    groups: [...groups.values()]
      .map(finish)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    unpricedModels: [...unpriced].sort(),
  };
}

/** A bad query parameter (400); the message names it. */
export class UsageQueryError extends DomainError {
  readonly kind = 'invalid' as const;
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'UsageQueryError';
  }
}

/** The longest window one ledger query may span. */
export const USAGE_MAX_DAYS = 366;
const DAY_MS = 24 * 60 * 60 * 1000;

function instant(param: string, raw: unknown, fallback: Date): Date {
  if (raw === undefined || raw === '') return fallback;
  const text = typeof raw === 'string' ? raw : '';
  // A date (2026-12-01: midnight UTC) or a full timestamp with its zone.
  const valid = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(
    text,
  );
  const date = new Date(text.length === 10 ? `${text}T00:00:00Z` : text);
  if (!valid || Number.isNaN(date.getTime())) {
    throw new UsageQueryError(
      param,
      `${param} must be a date (2026-12-01) or an ISO 8601 timestamp with a zone (2026-12-01T00:00:00Z)`,
    );
  }
  return date;
}

/**
 * The query from its parameters: `from` (default: 30 days before `to`), `to` (default: now),
 * `groupBy` (default: day). Anything else is refused by name.
 */
export function parseUsageQuery(
  params: Record<string, unknown>,
  userId: string | null,
  now: Date,
  allowed: readonly UsageGroupBy[],
): UsageQuery {
  for (const name of Object.keys(params)) {
    if (!['from', 'to', 'groupBy'].includes(name)) {
      throw new UsageQueryError(name, `${name} is not a parameter; use from, to and groupBy`);
    }
  }
  const to = instant('to', params.to, now);
  const from = instant('from', params.from, new Date(to.getTime() - 30 * DAY_MS));
  if (from.getTime() >= to.getTime()) throw new UsageQueryError('from', 'from must be before to');
  if (to.getTime() - from.getTime() > USAGE_MAX_DAYS * DAY_MS) {
    throw new UsageQueryError('from', `from and to may be at most ${USAGE_MAX_DAYS} days apart`);
  }
  const groupBy = params.groupBy ?? 'day';
  if (typeof groupBy !== 'string' || !(allowed as readonly string[]).includes(groupBy)) {
    throw new UsageQueryError('groupBy', `groupBy must be one of ${allowed.join(', ')}`);
  }
  return { userId, from, to, groupBy: groupBy as UsageGroupBy };
}
