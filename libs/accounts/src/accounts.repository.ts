import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';
import { generateApiKey, parseApiKey, secretMatches } from './api-key';
import { LruCache } from '@chronicle/platform';

// Users and their API keys. A key's secret is never stored: only its sha256, so a leaked
// database does not leak working keys.
//
// Every /v1 request authenticates, so a key found in the database is kept in memory for a few
// seconds (by prefix, with its stored hash: a hit still checks the secret, and no secret is held).
// A revoke or a change to a user drops what this instance cached at once, and AccountChanges
// announces it on the control plane so every other process drops it too (`forgetKey`,
// `forgetUser`). A pub/sub message is not stored: a process that misses it (Redis away at that
// moment) sees the change when the entry expires, so the cache's time to live stays the
// worst-case delay.

export interface User {
  id: string;
  name: string;
  createdAt: Date;
  /** Model tokens a day; null: the installation's DAILY_TOKEN_BUDGET. */
  dailyTokenBudget: number | null;
}

export interface ApiKeyInfo {
  id: string;
  userId: string;
  prefix: string;
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** A key as created: the only moment its whole text exists. */
export interface CreatedApiKey extends ApiKeyInfo {
  key: string;
}

/** What an admin may change of a user; absent fields stay as they are. */
export interface UserChange {
  name?: string;
  /** Model tokens a day; null: back to the installation's DAILY_TOKEN_BUDGET. */
  dailyTokenBudget?: number | null;
}

export interface Authenticated {
  user: User;
  keyId: string;
}

/** How stale `last_used_at` may get: one write a minute per key, not one per request. */
const LAST_USED_RESOLUTION = '1 minute';

/** How long an authenticated key is trusted without asking the database again. */
export const KEY_CACHE_TTL_MS = 10_000;
const KEY_CACHE_SIZE = 10_000;

export interface AccountsRepositoryOptions {
  /** 0 turns the key cache off. */
  keyCacheTtlMs?: number;
  now?: () => number;
}

interface CachedKey {
  keyId: string;
  secretHash: Buffer;
  user: User;
}

/** Serialises the first-start development key across API instances starting at once. */
const DEV_KEY_LOCK = 0x63687231; // "chr1"

/** A key as revoked: its prefix names it in every instance's cache (see `forgetKey`). */
export interface RevokedKey {
  prefix: string;
}

export class AccountsRepository {
  private readonly keys: LruCache<string, CachedKey> | null;
  /**
   * Counts the keys forgotten: a lookup that began before a forget may hold the row as it was
   * before the revoke, and must not put it in the cache (it would outlive the revoke by a TTL).
   */
  private forgets = 0;

  constructor(
    private readonly db: Kysely<Database>,
    options: AccountsRepositoryOptions = {},
  ) {
    const ttlMs = options.keyCacheTtlMs ?? KEY_CACHE_TTL_MS;
    this.keys =
      ttlMs > 0 ? new LruCache({ capacity: KEY_CACHE_SIZE, ttlMs, now: options.now }) : null;
  }

  async createUser(input: { name: string; dailyTokenBudget?: number | null }): Promise<User> {
    return this.insertUser(this.db, input);
  }

  async getUser(userId: string): Promise<User | null> {
    if (!isUuid(userId)) return null;
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', userId)
      .executeTakeFirst();
    return row ? toUser(row) : null;
  }

  /** Users in id order, `limit` of them after the user `after` (a page of the admin's list). */
  async listUsers(after: string | undefined, limit: number): Promise<User[]> {
    let query = this.db.selectFrom('users').selectAll().orderBy('id').limit(limit);
    if (after !== undefined) query = query.where('id', '>', after);
    return (await query.execute()).map(toUser);
  }

  /** Changes a user; null when there is no such user. Their cached keys are forgotten here. */
  async updateUser(userId: string, change: UserChange): Promise<User | null> {
    if (!isUuid(userId)) return null;
    const set: { name?: string; daily_token_budget?: number | null } = {};
    if (change.name !== undefined) set.name = change.name;
    if (change.dailyTokenBudget !== undefined) set.daily_token_budget = change.dailyTokenBudget;
    if (Object.keys(set).length === 0) return this.getUser(userId);
    const row = await this.db
      .updateTable('users')
      .set(set)
      .where('id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    if (!row) return null;
    this.forgetUser(userId);
    return toUser(row);
  }

  async createKey(userId: string, name = 'default'): Promise<CreatedApiKey | null> {
    if (!(await this.getUser(userId))) return null;
    return this.insertKey(this.db, userId, name);
  }

  async listKeys(userId: string): Promise<ApiKeyInfo[]> {
    if (!isUuid(userId)) return [];
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute();
    return rows.map(toKeyInfo);
  }

  /**
   * Revokes a key of this user; null when it does not exist (revoking twice is not an error).
   * The key is forgotten here; other instances learn it from the caller's announcement.
   */
  async revokeKey(userId: string, keyId: string): Promise<RevokedKey | null> {
    if (!isUuid(userId) || !isUuid(keyId)) return null;
    const row = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
      .where('id', '=', keyId)
      .where('user_id', '=', userId)
      .returning('prefix')
      .executeTakeFirst();
    if (!row) return null;
    this.forgetKey(row.prefix);
    return { prefix: row.prefix };
  }

  /** Drops a key from the cache: its next use asks the database (a revoke anywhere). */
  forgetKey(prefix: string): void {
    this.forgets += 1;
    this.keys?.delete(prefix);
  }

  /** Drops every cached key of a user, and the user with them (a change anywhere). */
  forgetUser(userId: string): void {
    this.forgets += 1;
    this.keys?.deleteWhere((cached) => cached.user.id === userId);
  }

  /** The user a key belongs to, or null for a malformed, unknown or revoked key. */
  async authenticate(key: string): Promise<Authenticated | null> {
    const parts = parseApiKey(key);
    if (!parts) return null;
    const cached = this.keys?.get(parts.prefix);
    if (cached) {
      return secretMatches(parts.secret, cached.secretHash)
        ? { user: cached.user, keyId: cached.keyId }
        : null;
    }
    const forgetsBefore = this.forgets;
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('users as u', 'u.id', 'k.user_id')
      .select([
        'k.id as key_id',
        'k.secret_hash',
        'k.revoked_at',
        'u.id',
        'u.name',
        'u.created_at',
        'u.daily_token_budget',
        // Asked with the row, so a key used within the minute costs one statement, not two.
        sql<boolean>`k.last_used_at is null or k.last_used_at < now() - ${LAST_USED_RESOLUTION}::interval`.as(
          'last_used_stale',
        ),
      ])
      .where('k.prefix', '=', parts.prefix)
      .executeTakeFirst();
    if (!row || !secretMatches(parts.secret, row.secret_hash) || row.revoked_at !== null) {
      return null;
    }
    if (row.last_used_stale) await this.touch(row.key_id);
    const user = toUser(row);
    if (this.forgets === forgetsBefore) {
      this.keys?.set(parts.prefix, { keyId: row.key_id, secretHash: row.secret_hash, user });
    }
    return { user, keyId: row.key_id };
  }

  /** Records a key's use, at most once a LAST_USED_RESOLUTION (the condition is checked again). */
  private async touch(keyId: string): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: sql<Date>`now()` })
      .where('id', '=', keyId)
      .where((eb) =>
        eb.or([
          eb('last_used_at', 'is', null),
          eb('last_used_at', '<', sql<Date>`now() - ${LAST_USED_RESOLUTION}::interval`),
        ]),
      )
      .execute();
  }

  /**
   * The first start of a fresh installation: a `dev` user and a key, so a local `npm start` can
   * be used at once. Null when any user exists already (the key was shown then, or users are
   * managed through the admin routes).
   */
  async createDevelopmentKeyIfNoUsers(): Promise<CreatedApiKey | null> {
    return this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${DEV_KEY_LOCK})`.execute(trx);
      const any = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
      if (any) return null;
      const user = await this.insertUser(trx, { name: 'dev' });
      return this.insertKey(trx, user.id, 'development key printed at start-up');
    });
  }

  private async insertUser(
    db: Kysely<Database>,
    input: { name: string; dailyTokenBudget?: number | null },
  ): Promise<User> {
    const row = await db
      .insertInto('users')
      .values({
        id: randomUUID(),
        name: input.name,
        daily_token_budget: input.dailyTokenBudget ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toUser(row);
  }

  private async insertKey(
    db: Kysely<Database>,
    userId: string,
    name: string,
  ): Promise<CreatedApiKey> {
    const generated = generateApiKey();
    const row = await db
      .insertInto('api_keys')
      .values({
        id: randomUUID(),
        user_id: userId,
        prefix: generated.prefix,
        secret_hash: generated.secretHash,
        name,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...toKeyInfo(row), key: generated.key };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Postgres refuses a malformed uuid with an error; a lookup of one simply finds nothing. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

function toUser(row: {
  id: string;
  name: string;
  created_at: Date;
  daily_token_budget: number | null;
}): User {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    dailyTokenBudget: row.daily_token_budget,
  };
}

function toKeyInfo(row: {
  id: string;
  user_id: string;
  prefix: string;
  name: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}): ApiKeyInfo {
  return {
    id: row.id,
    userId: row.user_id,
    prefix: row.prefix,
    name: row.name,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}
