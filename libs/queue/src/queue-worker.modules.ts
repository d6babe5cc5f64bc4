// Nest wiring for a worker app: BullMQ's root (worker connections, the installation's prefix)
// and the one queue it consumes. The processor class, with its own options, is the app's.
import type { DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import type { ConnectionOptions } from 'bullmq';
import { workerConnectionOptions } from '@chronicle/platform';
import type { QueueName } from './queue.registry';

/**
 * Connection options for a bullmq `Worker` (or QueueEvents): BullMQ opens its own connections
 * from these, including the blocking one. BullMQ's RedisOptions type is looser than ioredis';
 * the values are ioredis options.
 */
export function workerConnection(redisUrl: string): ConnectionOptions {
  return { ...workerConnectionOptions(), url: redisUrl } as ConnectionOptions;
}

export function queueWorkerModules(
  config: { redisUrl: string; prefix: string },
  queue: QueueName,
): DynamicModule[] {
  return [
    BullModule.forRoot({
      connection: workerConnection(config.redisUrl),
      prefix: config.prefix,
    }),
    // Registering the queue brings in @nestjs/bullmq's explorer, which builds the worker.
    BullModule.registerQueue({ name: queue }),
  ];
}
