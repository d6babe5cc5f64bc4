import { type DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccountsModule } from '@chronicle/accounts';
import type { AppConfig } from '@chronicle/platform';
import { AccessGuard } from './access.guard';
import { AdminAccountsController } from './admin-accounts.controller';
import { AUTH_CONFIG } from './auth.config';
import { DevelopmentKey } from './development-key';

/** API keys on every /v1 route, the admin key on /v1/admin, rate limits, ownership, budgets. */
@Module({})
export class AuthModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AuthModule,
      imports: [AccountsModule.forRoot({ redisUrl: config.redisUrl, prefix: config.queuePrefix })],
      controllers: [AdminAccountsController],
      providers: [
        { provide: AUTH_CONFIG, useValue: config },
        AccessGuard,
        { provide: APP_GUARD, useExisting: AccessGuard },
        DevelopmentKey,
      ],
      exports: [AccessGuard],
    };
  }
}
