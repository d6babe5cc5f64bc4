// Thin Nest wiring around the plain classes: one Kysely (one pg Pool) per
// process, the repositories, the outbox relay, and the pool closed on shutdown.
import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Kysely } from 'kysely';
import { createDatabase, withQueryTimeout, type Database } from './database';
import { EventStoreRepository } from './event-store.repository';
import { migrateToLatest } from './migrate';
import { OutboxRelay, type OutboxEnqueuer, type OutboxRelayOptions } from './outbox.relay';
import { SnapshotRepository } from './snapshot.repository';

/** Injection token of the process's `Kysely<Database>`. */
export const EVENT_STORE_DB = Symbol('EVENT_STORE_DB');
const EVENT_STORE_CONFIG = Symbol('EVENT_STORE_CONFIG');
/** Migrations' statement bound when the config gives none (DATABASE_SLOW_QUERY_TIMEOUT_MS's default). */
const SLOW_DEFAULT_MS = 120_000;

export interface EventStoreConfig {
  connectionString: string;
  poolSize: number;
  /** Every statement's bound (see `DatabaseOptions.queryTimeoutMs`); omitted: unbounded. */
  queryTimeoutMs?: number;
  /** The bound of the slow work run in `withQueryTimeout` (migrations here; imports, exports). */
  slowQueryTimeoutMs?: number;
  /** Run migrations (under the advisory lock) before anything uses the database. */
  migrate?: boolean;
  /** Run the outbox sweeper from application bootstrap to shutdown. */
  sweepOutbox?: boolean;
  outbox?: OutboxRelayOptions;
  /**
   * Where the relay enqueues committed outbox rows (the queue producer, given by the app's
   * wiring). Without one there is no relay: rows then wait for a process that runs the sweeper.
   */
  outboxEnqueuer?: OutboxEnqueuer;
}

export interface EventStoreModuleAsyncOptions {
  imports?: DynamicModule['imports'];
  inject?: unknown[];
  useFactory: (...args: never[]) => EventStoreConfig | Promise<EventStoreConfig>;
}

@Injectable()
class EventStoreLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(EVENT_STORE_CONFIG) private readonly config: EventStoreConfig,
    @Inject(EVENT_STORE_DB) private readonly db: Kysely<Database>,
    @Inject(OutboxRelay) private readonly relay: OutboxRelay | null,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.sweepOutbox && this.relay) this.relay.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay?.stop();
    await this.db.destroy();
  }
}

@Global()
@Module({})
export class EventStoreModule {
  static forRoot(config: EventStoreConfig): DynamicModule {
    return EventStoreModule.forRootAsync({ useFactory: () => config });
  }

  static forRootAsync(options: EventStoreModuleAsyncOptions): DynamicModule {
    return {
      module: EventStoreModule,
      imports: options.imports ?? [],
      providers: [
        {
          provide: EVENT_STORE_CONFIG,
          useFactory: options.useFactory,
          inject: (options.inject ?? []) as never[],
        },
        {
          provide: EVENT_STORE_DB,
          useFactory: async (config: EventStoreConfig) => {
            const db = createDatabase(config.connectionString, config.poolSize, {
              queryTimeoutMs: config.queryTimeoutMs,
            });
            if (config.migrate) {
              try {
                await withQueryTimeout(config.slowQueryTimeoutMs ?? SLOW_DEFAULT_MS, () =>
                  migrateToLatest(db),
                );
              } catch (error) {
                await db.destroy();
                throw error;
              }
            }
            return db;
          },
          inject: [EVENT_STORE_CONFIG],
        },
        {
          provide: OutboxRelay,
          useFactory: (config: EventStoreConfig, db: Kysely<Database>) =>
            config.outboxEnqueuer
              ? new OutboxRelay(db, config.outboxEnqueuer, config.outbox)
              : null,
          inject: [EVENT_STORE_CONFIG, EVENT_STORE_DB],
        },
        {
          provide: EventStoreRepository,
          useFactory: (db: Kysely<Database>, relay: OutboxRelay | null) =>
            new EventStoreRepository(db, { publisher: relay ?? undefined }),
          inject: [EVENT_STORE_DB, OutboxRelay],
        },
        {
          provide: SnapshotRepository,
          useFactory: (db: Kysely<Database>) => new SnapshotRepository(db),
          inject: [EVENT_STORE_DB],
        },
        EventStoreLifecycle,
      ],
      exports: [EVENT_STORE_DB, EventStoreRepository, SnapshotRepository, OutboxRelay],
    };
  }
}
