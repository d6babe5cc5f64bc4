// Nest wiring for a worker app: BullMQ's root (worker connections, the installation's prefix)
// and the queues it consumes. The processor class, with its own options, is the app's.
import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import type { ConnectionOptions } from 'bullmq';
import {
  closeRedis,
  createWorkerConnection,
  isClusterUrl,
  queueKeyPrefix,
  workerConnectionOptions,
  type RedisClient,
} from '@chronicle/platform';
import { queueTelemetry } from '@chronicle/telemetry';
import type { QueueName } from './queue.registry';

/**
 * Connection options for a bullmq `Worker` (or QueueEvents). For one server these are options,
 * and BullMQ opens (and closes) its own connections from them, including the blocking one.
 * BullMQ cannot open a Redis Cluster from options, so for a cluster URL this is a `Cluster`
 * client (its nodes with `maxRetriesPerRequest: null`, as BullMQ requires of workers), which
 * BullMQ duplicates for its worker and blocking connections but never closes: its caller does.
 * BullMQ's RedisOptions type is looser than ioredis'; the values are ioredis options.
 */
export function workerConnection(redisUrl: string): ConnectionOptions {
  if (isClusterUrl(redisUrl)) return createWorkerConnection(redisUrl) as ConnectionOptions;
  return { ...workerConnectionOptions(), url: redisUrl } as ConnectionOptions;
}

const WORKER_CLUSTER_CONNECTION = Symbol('WORKER_CLUSTER_CONNECTION');

@Injectable()
class WorkerConnectionCloser implements OnApplicationShutdown {
  constructor(@Inject(WORKER_CLUSTER_CONNECTION) private readonly connection: unknown) {}
  async onApplicationShutdown(): Promise<void> {
    // Nest closes the workers (and their duplicates) first; the cluster client is ours.
    if (this.connection) await closeRedis(this.connection as RedisClient);
  }
}

export function queueWorkerModules(
  config: { redisUrl: string; prefix: string },
  queues: QueueName | readonly QueueName[],
): DynamicModule[] {
  const connection = workerConnection(config.redisUrl);
  const owned = isClusterUrl(config.redisUrl) ? connection : null;
  @Module({
    providers: [{ provide: WORKER_CLUSTER_CONNECTION, useValue: owned }, WorkerConnectionCloser],
  })
  class WorkerConnectionModule {}
  return [
    BullModule.forRoot({ connection }),
    // Registering the queue brings in @nestjs/bullmq's explorer, which builds the worker with
    // the queue's options: its hash-tagged prefix (see queueKeyPrefix), and BullMQ's telemetry,
    // whose `process` span continues the trace the job was added in.
    BullModule.registerQueue(
      ...(Array.isArray(queues) ? queues : [queues]).map((name: QueueName) => ({
        name,
        prefix: queueKeyPrefix(config.prefix, name),
        telemetry: queueTelemetry(),
      })),
    ),
    { module: WorkerConnectionModule },
  ];
}
