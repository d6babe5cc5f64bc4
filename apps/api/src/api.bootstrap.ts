import { ValidationPipe, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { LIMITS } from '@chronicle/adventure';
import {
  controlPlaneTransport,
  portInUse,
  type AppConfig,
  type JsonLogger,
} from '@chronicle/platform';
import type { NextFunction, Request, Response } from 'express';
import express, { json, raw, text } from 'express';

interface Router {
  caseSensitive?: boolean;
  strict?: boolean;
}
import { ApiModule } from './api.module';
import { AccessGuard } from './auth/access.guard';
import { ApiMetrics } from './metrics/api-metrics';
import { errorBody, ErrorFilter } from './http/error.filter';
import { correlate } from './http/correlation.middleware';
import { serveWebClient, webClientDirectory } from './web/web-client';
import { securityHeaders } from './http/security-headers.middleware';
import {
  acceptedContentTypes,
  BodyTooDeepError,
  refuseDeepJson,
  VALIDATION_OPTIONS,
} from './http/request-body';
import { PathParamsPipe } from './http/path-params.pipe';

const MB = 1024 * 1024;

export async function startApi(config: AppConfig, logger: JsonLogger): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(
    ApiModule.forRoot(config),
    apiHttpAdapter(),
    { logger, bodyParser: false },
  );
  configureHttp(app, config);
  app.connectMicroservice(controlPlaneTransport(config.redisUrl), { inheritAppConfig: true });
  await app.startAllMicroservices();
  try {
    await app.listen(config.port, config.host);
  } catch (error) {
    await app.close();
    throw portInUse(error, 'PORT', config.port, config.host) ?? error;
  }
  return app;
}

/**
 * The Express instance the API runs on. Its router is made when the adapter is (and takes the
 * settings in effect then), so a route matches only as it is spelled — /V1/… and /v1/…/ are not
 * /v1/… — which makes what the access guard read what the router serves.
 */
export function apiHttpAdapter(): ExpressAdapter {
  const instance = express();
  instance.set('case sensitive routing', true);
  instance.set('strict routing', true);
  instance.disable('x-powered-by');
  return new ExpressAdapter(instance);
}

/** Everything HTTP-level, shared by `npm start` and the tests that boot the API in-process. */
export function configureHttp(
  app: NestExpressApplication,
  config: Pick<AppConfig, 'trustProxy'>,
): void {
  const router = (app.getHttpAdapter().getInstance() as { router?: Router }).router;
  if (!router?.caseSensitive || !router.strict) {
    // Fail closed: a lenient router serves spellings the guard was not asked about.
    throw new Error('the API must be created on apiHttpAdapter() (case-sensitive, strict routing)');
  }
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.use(correlate);
  app.use(app.get(ApiMetrics, { strict: false }).observeRequests);
  app.use(securityHeaders);
  // Every request is decided before any body is read: nobody without a key costs a parse.
  app.use(app.get(AccessGuard, { strict: false }).admit);
  app.use(acceptedContentTypes);
  // Imports carry a whole event log; every other body is small. The limits
  // are named in LIMITS and documented in the README.
  app.use(
    '/v1/adventures/import',
    text({ type: ['application/x-ndjson', 'text/plain'], limit: LIMITS.importBodyBytes }),
  );
  // A lore file arrives as itself (JSON, PNG, zip): raw bytes of any type but a multipart form
  // (acceptedContentTypes), parsed by libs/lore, which reads the format from the bytes. Mounted before the JSON parser, which then leaves the
  // body alone.
  app.use(
    '/v1/adventures/:id/story-cards/import',
    raw({ type: () => true, limit: LIMITS.loreFileBytes }),
  );
  // A script's Library may be 4 MiB of UTF-8 (LIMITS.scripts), so a script route's body may
  // be larger than other bodies; a scenario created with its scripts stays within bodyBytes.
  app.use(
    /^\/v1\/adventures\/[^/]+\/scripts(\/[^/]+)?$/,
    json({ limit: LIMITS.scriptBodyBytes, reviver: refusePrototypeKeys, verify: refuseDeepJson }),
  );
  app.use(json({ limit: LIMITS.bodyBytes, reviver: refusePrototypeKeys, verify: refuseDeepJson }));
  app.use(bodyErrors);
  app.useGlobalPipes(new PathParamsPipe(), new ValidationPipe(VALIDATION_OPTIONS));
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
  serveWebClient(app, webClientDirectory());
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
  if (error instanceof BodyTooDeepError) {
    res.status(400).json(errorBody(400, error.message));
    return;
  }
  // The parser's own words (positions, tokens, the runtime's messages) stay out of the answer.
  if (e?.type === 'entity.parse.failed' || e?.type === 'entity.verify.failed') {
    res
      .status(400)
      .json(
        errorBody(
          400,
          'Request body is not valid JSON; send one JSON object with Content-Type: application/json.',
        ),
      );
    return;
  }
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    res
      .status(415)
      .json(errorBody(415, 'Request body must be UTF-8 (Content-Type: application/json).'));
    return;
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    res.status(e.status).json(errorBody(e.status, 'The request body could not be read.'));
    return;
  }
  next(error);
}
