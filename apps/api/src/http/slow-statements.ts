import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { withQueryTimeout } from '@chronicle/event-store';
import type { AppConfig } from '@chronicle/platform';
import type { Observable } from 'rxjs';
import { APP_CONFIG } from '../app-config.token';

const SLOW_STATEMENTS = 'chronicle:slow-statements';

/**
 * The route's statements may take DATABASE_SLOW_QUERY_TIMEOUT_MS instead of
 * DATABASE_QUERY_TIMEOUT_MS: it legitimately moves a whole adventure (an import or an export) or
 * reads across all of them. Every other route answers 503 once one statement waits longer than
 * the short bound (a frozen Postgres), within the API's 3 s.
 */
export const SlowStatements = () => SetMetadata(SLOW_STATEMENTS, true);

@Injectable()
export class SlowStatementsInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.reflector.get<boolean>(SLOW_STATEMENTS, context.getHandler())) return next.handle();
    // Nest binds the handler's async context when `handle` is called: the bound is in force
    // for every statement the handler sends, however late.
    return withQueryTimeout(this.config.databaseSlowQueryTimeoutMs, () => next.handle());
  }
}
