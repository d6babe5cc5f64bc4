import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import { asDependencyUnavailable } from '@chronicle/platform';
import type { Response } from 'express';

// One place maps every error to HTTP: domain errors carry a `kind`
// (conflict → 409, not_found → 404, invalid → 400, limit → 413/422,
// rate_limited → 429) and a message that says what to fix; anything else is a
// 500 whose details stay in the log, never in the response.

interface DomainLikeError {
  kind: string;
  message: string;
  retryAfterSeconds?: number;
}

const STATUS_BY_KIND: Record<string, number> = {
  conflict: HttpStatus.CONFLICT,
  not_found: HttpStatus.NOT_FOUND,
  invalid: HttpStatus.BAD_REQUEST,
  unauthorized: HttpStatus.UNAUTHORIZED,
  forbidden: HttpStatus.FORBIDDEN,
  too_large: HttpStatus.PAYLOAD_TOO_LARGE,
  limit: HttpStatus.UNPROCESSABLE_ENTITY,
  rate_limited: HttpStatus.TOO_MANY_REQUESTS,
  unavailable: HttpStatus.SERVICE_UNAVAILABLE,
};

function isDomainError(error: unknown): error is DomainLikeError {
  return (
    error instanceof Error &&
    typeof (error as unknown as DomainLikeError).kind === 'string' &&
    (error as unknown as DomainLikeError).kind in STATUS_BY_KIND
  );
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

  catch(thrown: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw thrown;
    // Postgres or Redis unreachable: a 503 with Retry-After (kind `unavailable`), not a 500.
    const exception = asDependencyUnavailable(thrown) ?? thrown;
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) {
      response.end();
      return;
    }
    if (isDomainError(exception)) {
      const status = STATUS_BY_KIND[exception.kind];
      if (exception.retryAfterSeconds !== undefined) {
        response.setHeader(
          'Retry-After',
          String(Math.max(1, Math.ceil(exception.retryAfterSeconds))),
        );
      }
      response.status(status).json(errorBody(status, exception.message));
      return;
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const body = exception.getResponse();
      const message =
        typeof body === 'string'
          ? body
          : ((body as { message?: string | string[] }).message ?? exception.message);
      response.status(status).json(errorBody(status, message));
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
