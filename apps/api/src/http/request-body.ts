import {
  BadRequestException,
  ValidationPipe,
  type ArgumentMetadata,
  type PipeTransform,
  type Type,
  type ValidationError,
  type ValidationPipeOptions,
} from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './error.filter';
import { rawPathOf } from '../auth/open-paths';

// What a request body may be before a parser or a DTO sees it, and how a DTO's refusal reads.

const IMPORT_PATH = '/v1/adventures/import';
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const IMPORT_TYPES = /^(application\/x-ndjson|text\/plain)\s*(;|$)/i;
/**
 * A lore file (POST /v1/adventures/:id/story-cards/import) is sent as itself, and libs/lore tells
 * its format from its bytes, so any Content-Type is taken (curl's `--data-binary @file` says
 * application/x-www-form-urlencoded, a browser may say nothing). Only a multipart form is
 * refused: it wraps the file in boundaries the parser would read as part of it.
 */
const LORE_IMPORT_PATH = /^\/v1\/adventures\/[^/]+\/story-cards\/import$/;
const NOT_LORE_TYPES = /^multipart\//i;

function hasBody(req: IncomingMessage): boolean {
  return (
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
  );
}

/**
 * A body of a media type the route does not take is a 415 naming the ones it does, before any
 * parser runs: otherwise the body is silently not read and the DTO reports fields "too long" or
 * missing that the client did send.
 */
export function acceptedContentTypes(req: Request, res: Response, next: NextFunction): void {
  if (!hasBody(req)) return next();
  const type = req.headers['content-type'] ?? '';
  const path = rawPathOf(req.url);
  const isImport = path === IMPORT_PATH;
  const isLore = LORE_IMPORT_PATH.test(path);
  if (isLore ? !NOT_LORE_TYPES.test(type) : (isImport ? IMPORT_TYPES : JSON_TYPE).test(type)) {
    return next();
  }
  const accepted = isImport
    ? 'application/x-ndjson (or text/plain), as GET /v1/adventures/:id/export sends it'
    : isLore
      ? 'the lore file itself, not a form (curl --data-binary @file, or -T file), with any other Content-Type'
      : 'application/json';
  const got = type === '' ? 'no Content-Type' : `Content-Type ${type.slice(0, 100)}`;
  res
    .status(415)
    .json(errorBody(415, `${got} is not accepted here; send the body as ${accepted}.`));
}

/** Deeper than any body of the API: arrays and objects nested further are refused. */
export const MAX_JSON_DEPTH = 64;

export class BodyTooDeepError extends Error {
  readonly status = 400;
  constructor() {
    super(
      `Request body nests arrays and objects more than ${MAX_JSON_DEPTH} deep; no field of the API is that deep.`,
    );
    this.name = 'BodyTooDeepError';
  }
}

/** How deep `text` nests arrays and objects, by its brackets outside strings (no parse). */
export function jsonDepthExceeds(bytes: Uint8Array | string, max: number): boolean {
  const OPEN_OBJECT = 0x7b;
  const OPEN_ARRAY = 0x5b;
  const CLOSE_OBJECT = 0x7d;
  const CLOSE_ARRAY = 0x5d;
  const QUOTE = 0x22;
  const BACKSLASH = 0x5c;
  const at =
    typeof bytes === 'string' ? (i: number) => bytes.charCodeAt(i) : (i: number) => bytes[i];
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return false;
}

/** body-parser's `verify`: runs on the raw bytes before JSON.parse (and its reviver) recurse. */
export function refuseDeepJson(_req: IncomingMessage, _res: unknown, buf: Buffer): void {
  if (jsonDepthExceeds(buf, MAX_JSON_DEPTH)) throw new BodyTooDeepError();
}

/**
 * The validation pipe's refusal: every problem, each naming its field by its path. A required
 * field that is absent says it is missing — not that it is too long or of the wrong type.
 */
export function validationErrors(errors: ValidationError[]): BadRequestException {
  const messages: string[] = [];
  const walk = (list: ValidationError[], prefix: string) => {
    for (const error of list) {
      const path = `${prefix}${error.property}`;
      if (error.constraints) {
        const missing = error.value === undefined && !('whitelistValidation' in error.constraints);
        if (missing) messages.push(`${path} is missing`);
        else messages.push(...Object.values(error.constraints).map((m) => `${prefix}${m}`));
      }
      if (error.children?.length) walk(error.children, `${path}.`);
    }
  };
  walk(errors, '');
  return new BadRequestException(messages);
}

/** How every body and query is checked (the global pipe, and OptionalBody below). */
export const VALIDATION_OPTIONS: ValidationPipeOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  transform: true,
  stopAtFirstError: false,
  exceptionFactory: validationErrors,
};

/**
 * A body a route may go without: absent, or `{}` (what a client that always sends a JSON body
 * sends for nothing, the web client's `api.post` among them), the handler gets undefined; with
 * any field it is checked as `dto` like any body (an undeclared field is a 400 naming it). The
 * global pipe would check an absent body as `{}` and refuse it, so the parameter is declared as
 * a union the global pipe leaves alone (its metatype is Object) and checked here.
 */
export class OptionalBody<T extends object> implements PipeTransform {
  private readonly pipe: ValidationPipe;

  constructor(private readonly dto: Type<T>) {
    this.pipe = new ValidationPipe({ ...VALIDATION_OPTIONS, expectedType: dto });
  }

  transform(value: unknown, metadata: ArgumentMetadata): Promise<T | undefined> | undefined {
    if (value === undefined || isEmptyObject(value)) return undefined;
    return this.pipe.transform(value, { ...metadata, metatype: this.dto }) as Promise<T>;
  }
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 0
  );
}
