import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { controlPlaneTransport, type AppConfig, type JsonLogger } from '@chronicle/platform';
import { MemoryWorkerModule } from './memory-worker.module';

/** The memory worker: a Nest microservice on the control-plane transport, consuming `memory` and `webhooks`. */
export async function startMemoryWorker(
  config: AppConfig,
  logger: JsonLogger,
): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(
    MemoryWorkerModule.forRoot(config),
    { ...controlPlaneTransport(config.redisUrl), logger },
  );
  await app.listen();
  return app;
}
