import { ValidationPipe, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { LIMITS } from '@chronicle/adventure';
import { controlPlaneTransport, type AppConfig, type JsonLogger } from '@chronicle/platform';
import type { NextFunction, Request, Response } from 'express';
import { json, text } from 'express';
import { ApiModule } from './api.module';
import { errorBody, ErrorFilter } from './http/error.filter';
import { correlate } from './http/correlation.middleware';

const MB = 1024 * 1024;

export async function startApi(config: AppConfig, logger: JsonLogger): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRoot(config), {
    logger,
    bodyParser: false,
  });
  configureHttp(app);
  app.connectMicroservice(controlPlaneTransport(config.redisUrl), { inheritAppConfig: true });
  await app.startAllMicroservices();
  await app.listen(config.port, config.host);
  return app;
}

/** Everything HTTP-level, shared by `npm start` and the tests that boot the API in-process. */
export function configureHttp(app: NestExpressApplication): void {
  app.use(correlate);
  // Imports carry a whole event log; every other body is small. The limits
  // are named in LIMITS and documented in the README.
  app.use(
    '/v1/adventures/import',
    json({ limit: LIMITS.importBodyBytes, reviver: refusePrototypeKeys }),
  );
  app.use(
    '/v1/adventures/import',
    text({ type: ['application/x-ndjson', 'text/plain'], limit: LIMITS.importBodyBytes }),
  );
  // A script's Library may be 4 MiB of UTF-8 (LIMITS.scripts), so a script route's body may
  // be larger than other bodies; a scenario created with its scripts stays within bodyBytes.
  app.use(
    /^\/v1\/adventures\/[^/]+\/scripts(\/[^/]+)?$/,
    json({ limit: LIMITS.scriptBodyBytes, reviver: refusePrototypeKeys }),
  );
  app.use(json({ limit: LIMITS.bodyBytes, reviver: refusePrototypeKeys }));
  app.use(bodyErrors);
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      stopAtFirstError: false,
    }),
  );
  app.useGlobalFilters(new ErrorFilter());
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Chronicle')
      .setDescription('An event-sourced backend for AI interactive fiction.')
      .setVersion('1')
      .addBearerAuth()
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/json' });
}

/** A body that names `__proto__`, `constructor` or `prototype`: refused before any object merge. */
class PrototypeKeyError extends Error {}

// JSON.parse makes `__proto__` an own property, which the validation pipe's copy into a DTO
// turns into the instance's prototype: the field would vanish instead of being refused. A
// `constructor` or `prototype` key is dropped as silently by class-transformer. No field of the
// API has these names, so any of them at any depth is a mass-assignment attempt: refuse it.
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (PROTOTYPE_KEYS.has(key)) {
    throw new PrototypeKeyError(`property ${key} should not exist; remove it`);
  }
  return value;
}

/** Body-parser failures happen before Nest's filters see the request: answer them here. */
function bodyErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  const e = error as { type?: string; status?: number; limit?: number; message?: string };
  if (e?.type === 'entity.too.large') {
    const limit = `${Math.round(((e.limit ?? 0) / MB) * 10) / 10} MB`;
    res
      .status(413)
      .json(
        errorBody(
          413,
          `Request body is larger than the ${limit} limit; send less (see "Limits" in the README).`,
        ),
      );
    return;
  }
  if (error instanceof PrototypeKeyError) {
    res.status(400).json(errorBody(400, [error.message]));
    return;
  }
  if (e?.type === 'entity.parse.failed') {
    res
      .status(400)
      .json(errorBody(400, `Request body is not valid JSON: ${e.message ?? 'parse error'}.`));
    return;
  }
  next(error);
}
