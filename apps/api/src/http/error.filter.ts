import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import { isDomainError, type DomainErrorKind } from '@chronicle/adventure';
import { EventIdReuseError, StreamVersionConflictError } from '@chronicle/event-store';
import { asDependencyUnavailable } from '@chronicle/platform';
import type { Response } from 'express';

// One place maps every error to HTTP. Only known error classes are answered by their kind —
// DomainError and its subclasses (the adventure's, the accounts'), and the event store's
// conflicts — with a message that says what to fix; anything else, an object with a `kind` of
// its own included (a model provider's error), is a 500 whose details stay in the log, never in
// the response.

const STATUS_BY_KIND: Record<DomainErrorKind, number> = {
  conflict: HttpStatus.CONFLICT,
  not_found: HttpStatus.NOT_FOUND,
  invalid: HttpStatus.BAD_REQUEST,
  limit: HttpStatus.UNPROCESSABLE_ENTITY,
  unprocessable: HttpStatus.UNPROCESSABLE_ENTITY,
  unauthorized: HttpStatus.UNAUTHORIZED,
  forbidden: HttpStatus.FORBIDDEN,
  gone: HttpStatus.GONE,
  rate_limited: HttpStatus.TOO_MANY_REQUESTS,
  unavailable: HttpStatus.SERVICE_UNAVAILABLE,
};

/** A write that lost the race to the stream's head more often than its retries allow. */
const CONFLICT_MESSAGE =
  'the adventure changed while this request was being decided (other writes won the race); send it again';

interface Answer {
  status: number;
  message: string | string[];
  retryAfterSeconds?: number;
  /** Fields a domain error adds to the body (hot-seat's 409 names `currentPlayer`). */
  details?: Record<string, unknown>;
}

/** The answer for a known error class; null for anything else (a 500). */
export function answerFor(exception: unknown): Answer | null {
  // Postgres or Redis unreachable (what pg, ioredis and BullMQ throw then): a 503 with
  // Retry-After naming which, not a 500.
  const unavailable = asDependencyUnavailable(exception);
  if (unavailable) {
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      message: unavailable.message,
      retryAfterSeconds: unavailable.retryAfterSeconds,
    };
  }
  if (isDomainError(exception)) {
    const retryAfterSeconds = (exception as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    const details = (exception as { details?: unknown }).details;
    return {
      status: STATUS_BY_KIND[exception.kind],
      message: exception.message,
      ...(typeof retryAfterSeconds === 'number' && { retryAfterSeconds }),
      ...(typeof details === 'object' &&
        details !== null && { details: details as Record<string, unknown> }),
    };
  }
  if (exception instanceof StreamVersionConflictError) {
    return { status: STATUS_BY_KIND[exception.kind], message: CONFLICT_MESSAGE };
  }
  if (exception instanceof EventIdReuseError) {
    return {
      status: STATUS_BY_KIND[exception.kind],
      message: 'these ids were already used by another request; send new ids',
    };
  }
  if (exception instanceof HttpException) {
    const body = exception.getResponse();
    const message =
      typeof body === 'string'
        ? body
        : ((body as { message?: string | string[] }).message ?? exception.message);
    return { status: exception.getStatus(), message };
  }
  return null;
}

export function errorBody(status: number, message: string | string[]) {
  const error = (HttpStatus[status] ?? 'Error')
    .toLowerCase()
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
  return { statusCode: status, error, message };
}

@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) {
      response.end();
      return;
    }
    const answer = answerFor(exception);
    if (answer) {
      if (answer.retryAfterSeconds !== undefined) {
        response.setHeader('Retry-After', String(Math.max(1, Math.ceil(answer.retryAfterSeconds))));
      }
      if (answer.status === HttpStatus.SERVICE_UNAVAILABLE) this.logger.warn(answer.message);
      else if (answer.status >= 500) this.logger.error(exception as Error);
      response
        .status(answer.status)
        .json({ ...errorBody(answer.status, answer.message), ...answer.details });
      return;
    }
    this.logger.error(exception instanceof Error ? exception : String(exception));
    response
      .status(HttpStatus.INTERNAL_SERVER_ERROR)
      .json(
        errorBody(
          HttpStatus.INTERNAL_SERVER_ERROR,
          'Something went wrong on our side; it has been logged.',
        ),
      );
  }
}
