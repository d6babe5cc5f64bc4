// Nest wiring for a worker app: BullMQ's root (worker connections, the installation's prefix)
// and the one queue it consumes. The processor class, with its own options, is the app's.
import type { DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import type { ConnectionOptions } from 'bullmq';
import type { QueueName } from './queue.registry';
import { workerConnectionOptions } from './redis-connection.factory';

export function queueWorkerModules(
  config: { redisUrl: string; prefix: string },
  queue: QueueName,
): DynamicModule[] {
  return [
    BullModule.forRoot({
      // BullMQ's own RedisOptions type is looser than ioredis'; the values are ioredis options.
      connection: { ...workerConnectionOptions(), url: config.redisUrl } as ConnectionOptions,
      prefix: config.prefix,
    }),
    // Registering the queue brings in @nestjs/bullmq's explorer, which builds the worker.
    BullModule.registerQueue({ name: queue }),
  ];
}
