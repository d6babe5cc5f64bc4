import { type DynamicModule, Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AdventureStoreModule } from '@chronicle/adventure-store';
import { EventStoreModule } from '@chronicle/event-store';
import { ControlPlaneModule, type AppConfig } from '@chronicle/platform';
import { QueueModule, QueueName, workerConnectionOptions } from '@chronicle/queue';
import type { ConnectionOptions } from 'bullmq';
import { MemoryProcessor } from './memory.processor';
import { UpdateMemoryUseCase } from './update-memory.use-case';
import { WORKER_CONFIG } from './worker-config.token';

@Module({})
export class MemoryWorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: MemoryWorkerModule,
      imports: [
        EventStoreModule.forRoot({
          connectionString: config.databaseUrl,
          poolSize: config.databasePoolSize,
          // Memory and summary events may carry follow-up jobs; this process relays them too.
          sweepOutbox: true,
          outbox: { sweepIntervalMs: config.outboxSweepIntervalMs },
        }),
        QueueModule.forRoot({ redisUrl: config.redisUrl, prefix: config.queuePrefix }),
        AdventureStoreModule.forRoot({ snapshotEvery: config.snapshotEvery }),
        ControlPlaneModule.forRoot({
          redisUrl: config.redisUrl,
          installation: config.queuePrefix,
          app: 'memory-worker',
        }),
        BullModule.forRoot({
          // BullMQ's own RedisOptions type is looser than ioredis'; the values are ioredis options.
          connection: { ...workerConnectionOptions(), url: config.redisUrl } as ConnectionOptions,
          prefix: config.queuePrefix,
        }),
        // Registering the queue brings in @nestjs/bullmq's explorer, which builds the worker.
        BullModule.registerQueue({ name: QueueName.Memory }),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        UpdateMemoryUseCase,
        MemoryProcessor,
      ],
    };
  }
}
