import type { DynamicModule } from '@nestjs/common';
import { EventStoreModule } from '@chronicle/event-store';
import { JobName, QueueModule, QueueProducer } from '@chronicle/queue';
import type { AdventureCommandHandlerOptions } from './adventure.command-handler';
import { AdventureStoreModule } from './adventure-store.module';

/** The settings the shared infrastructure reads (a subset of @chronicle/platform's AppConfig). */
export interface InfrastructureConfig {
  databaseUrl: string;
  databasePoolSize: number;
  databaseQueryTimeoutMs: number;
  databaseSlowQueryTimeoutMs: number;
  redisUrl: string;
  queuePrefix: string;
  narrateAttempts: number;
  webhooksAttempts: number;
  webhooksRetryBaseMs: number;
  snapshotEvery: number;
  outboxSweepIntervalMs: number;
}

/**
 * The projection cache of a process that meets every adventure being played: each API takes any
 * player's request and each narrate worker any turn (behind a round robin, one player's POST and
 * stream land on different APIs). A cache smaller than the adventures in play loads most requests
 * from a snapshot (a read, a decode, a fold of up to SNAPSHOT_EVERY events, the window's texts
 * read again) instead of one read of the events since. Thousands of young adventures fit; the
 * weight (about a kilobyte a unit, so some 150 MB at most) keeps long ones from filling it.
 */
export const PLAYED_PROJECTION_CACHE = { cacheSize: 4_096, cacheWeight: 150_000 };

/**
 * What every app stands on, configured one way: the event store (one pool,
 * and the outbox sweeper — every app appends events that carry jobs, so every
 * app relays its own and sweeps what a crash left behind), the queue producer
 * and the adventure repository.
 */
export function adventureInfrastructure(
  config: InfrastructureConfig,
  /** The projection cache's bounds, when the app's load needs others than the default. */
  cache: Pick<AdventureCommandHandlerOptions, 'cacheSize' | 'cacheWeight'> = {},
): DynamicModule[] {
  return [
    EventStoreModule.forRootAsync({
      inject: [QueueProducer],
      useFactory: (producer: QueueProducer) => ({
        connectionString: config.databaseUrl,
        poolSize: config.databasePoolSize,
        queryTimeoutMs: config.databaseQueryTimeoutMs,
        slowQueryTimeoutMs: config.databaseSlowQueryTimeoutMs,
        sweepOutbox: true,
        outbox: { sweepIntervalMs: config.outboxSweepIntervalMs },
        outboxEnqueuer: producer,
      }),
    }),
    QueueModule.forRoot({
      redisUrl: config.redisUrl,
      prefix: config.queuePrefix,
      attempts: {
        [JobName.NarrateTurn]: config.narrateAttempts,
        [JobName.DeliverWebhook]: config.webhooksAttempts,
      },
      retryBaseMs: { [JobName.DeliverWebhook]: config.webhooksRetryBaseMs },
    }),
    AdventureStoreModule.forRoot({ snapshotEvery: config.snapshotEvery, ...cache }),
  ];
}
