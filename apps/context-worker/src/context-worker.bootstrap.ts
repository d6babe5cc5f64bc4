import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { controlPlaneTransport, type AppConfig, type JsonLogger } from '@chronicle/platform';
import { ContextWorkerModule } from './context-worker.module';

/** The context worker: a Nest microservice on the control-plane transport, consuming `narrate`. */
export async function startContextWorker(
  config: AppConfig,
  logger: JsonLogger,
): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(
    ContextWorkerModule.forRoot(config),
    { ...controlPlaneTransport(config.redisUrl), logger },
  );
  await app.listen();
  return app;
}
