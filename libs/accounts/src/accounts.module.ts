import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import { closeRedis, COMMAND_TIMEOUT_MS, createCommandConnection } from '@chronicle/platform';
import type { RedisClient } from '@chronicle/platform';
import type { Kysely } from 'kysely';
import { AccountChanges } from './account-changes';
import { AccountsRepository } from './accounts.repository';
import { AdventureOwners } from './adventure-owners.repository';
import { RateLimiter } from './rate-limiter';
import { DailyTokenBudget } from './token-budget';

/** The Redis client behind the rate limits and the daily token counters. */
export const ACCOUNTS_REDIS = Symbol('ACCOUNTS_REDIS');

@Injectable()
class AccountsRedisCloser implements OnApplicationShutdown {
  constructor(@Inject(ACCOUNTS_REDIS) private readonly redis: RedisClient) {}
  async onApplicationShutdown(): Promise<void> {
    await closeRedis(this.redis);
  }
}

/**
 * Accounts, ownership, budgets and rate limits; needs EventStoreModule (global) for the DB and
 * ControlPlaneModule (global) to tell other processes of a changed account. The
 * context worker imports it too, to count each narration's tokens (DailyTokenBudget).
 */
@Global()
@Module({})
export class AccountsModule {
  static forRoot(options: { redisUrl: string; prefix: string }): DynamicModule {
    return {
      module: AccountsModule,
      providers: [
        {
          provide: ACCOUNTS_REDIS,
          // Rate limits and budgets sit in front of every request: a frozen Redis is a 503, not a hang.
          useFactory: () =>
            createCommandConnection(options.redisUrl, 'chronicle-rate-limits', COMMAND_TIMEOUT_MS),
        },
        AccountsRedisCloser,
        {
          provide: AccountsRepository,
          useFactory: (db: Kysely<Database>) => new AccountsRepository(db),
          inject: [EVENT_STORE_DB],
        },
        {
          provide: AdventureOwners,
          useFactory: (db: Kysely<Database>) => new AdventureOwners(db),
          inject: [EVENT_STORE_DB],
        },
        {
          provide: DailyTokenBudget,
          useFactory: (db: Kysely<Database>, redis: RedisClient) =>
            new DailyTokenBudget(db, redis, options.prefix),
          inject: [EVENT_STORE_DB, ACCOUNTS_REDIS],
        },
        {
          provide: RateLimiter,
          useFactory: (redis: RedisClient) => new RateLimiter(redis, options.prefix),
          inject: [ACCOUNTS_REDIS],
        },
        AccountChanges,
      ],
      exports: [AccountsRepository, AccountChanges, AdventureOwners, DailyTokenBudget, RateLimiter],
    };
  }
}
