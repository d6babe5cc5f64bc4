import { AccountsModule, keysEqual } from '@chronicle/accounts';
import { type DynamicModule, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { adventureInfrastructure } from '@chronicle/adventure-store';
import { modelConfigsOf } from '@chronicle/llm';
import { MemoryStoreModule } from '@chronicle/memory-store';
import { meteredMemoryCalls, MetricsModule, workerMetricsServer } from '@chronicle/metrics';
import {
  closeRedis,
  ControlPlaneModule,
  createLockConnection,
  modelPriceTable,
  type AppConfig,
} from '@chronicle/platform';
import { QueueName, queueWorkerModules } from '@chronicle/queue';
import type { WorkerOptions } from 'bullmq';
import type { RedisClient } from '@chronicle/platform';
import { WebhooksModule } from '@chronicle/webhooks';
import { AdventureLock } from './adventure.lock';
import { MemoryProcessor } from './memory.processor';
import { WebhooksProcessor } from './webhooks.processor';
import { WORKER_CONFIG } from './worker-config.token';

const LOCK_REDIS = Symbol('LOCK_REDIS');

/** The memory worker's BullMQ options, from configuration. */
export function memoryWorkerOptions(config: AppConfig): Partial<WorkerOptions> {
  return {
    // Started at bootstrap, after the start-up checks (see MemoryProcessor).
    autorun: false,
    concurrency: config.memoryConcurrency,
    // A dead worker's pass is taken over within about twice this. There is no variable of its
    // own: the narrate lock's bound is the installation's "how soon is a dead worker noticed".
    lockDuration: config.narrateLockMs,
    stalledInterval: config.narrateLockMs,
  };
}

/**
 * Deliveries one memory worker sends at once: each mostly waits on its receiver (at most
 * WEBHOOKS_TIMEOUT_MS), so a few dead receivers do not hold up the others.
 */
export const WEBHOOK_CONCURRENCY = 16;

/** The webhooks queue's BullMQ options. */
export function webhooksWorkerOptions(config: AppConfig): Partial<WorkerOptions> {
  return {
    autorun: false,
    concurrency: WEBHOOK_CONCURRENCY,
    lockDuration: Math.max(config.narrateLockMs, config.webhooksTimeoutMs * 2),
    stalledInterval: config.narrateLockMs,
  };
}

@Module({})
export class MemoryWorkerModule implements OnApplicationShutdown {
  constructor(@Inject(LOCK_REDIS) private readonly lockRedis: RedisClient) {}

  static forRoot(config: AppConfig): DynamicModule {
    // @Processor's worker options are class metadata; a subclass per configuration carries
    // this process's (two modules booted in one test process keep their own).
    class ConfiguredMemoryProcessor extends MemoryProcessor {}
    Processor(QueueName.Memory, memoryWorkerOptions(config))(ConfiguredMemoryProcessor);
    class ConfiguredWebhooksProcessor extends WebhooksProcessor {}
    Processor(QueueName.Webhooks, webhooksWorkerOptions(config))(ConfiguredWebhooksProcessor);

    return {
      module: MemoryWorkerModule,
      imports: [
        ...adventureInfrastructure(config),
        // The memory worker's model calls count toward their owner's daily budget.
        AccountsModule.forRoot({ redisUrl: config.redisUrl, prefix: config.queuePrefix }),
        MetricsModule.forRoot({
          app: 'memory-worker',
          server: workerMetricsServer('memory-worker', config, keysEqual),
        }),
        MemoryStoreModule.forRoot({
          models: modelConfigsOf(config),
          // Every memory, summary and embedding call counted: durations, errors by code, tokens
          // and cost.
          ...meteredMemoryCalls(modelPriceTable(config)),
        }),
        ControlPlaneModule.forRoot({
          redisUrl: config.redisUrl,
          installation: config.queuePrefix,
          app: 'memory-worker',
        }),
        WebhooksModule.forRoot(config),
        ...queueWorkerModules({ redisUrl: config.redisUrl, prefix: config.queuePrefix }, [
          QueueName.Memory,
          QueueName.Webhooks,
        ]),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        {
          provide: LOCK_REDIS,
          // Fails fast like a producer (a job whose lock call fails is retried), but queues the
          // commands of a job that starts while the connection is still opening.
          useFactory: () => createLockConnection(config.redisUrl, 'chronicle-memory-lock'),
        },
        {
          provide: AdventureLock,
          useFactory: (redis: RedisClient) => new AdventureLock(redis, config.queuePrefix),
          inject: [LOCK_REDIS],
        },
        { provide: MemoryProcessor, useClass: ConfiguredMemoryProcessor },
        { provide: WebhooksProcessor, useClass: ConfiguredWebhooksProcessor },
      ],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    // After the processor has closed (Nest shuts providers down before the module itself).
    await closeRedis(this.lockRedis);
  }
}
