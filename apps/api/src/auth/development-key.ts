import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AccountsRepository } from '@chronicle/accounts';
import type { AppConfig } from '@chronicle/platform';
import { AUTH_CONFIG } from './auth.config';

/** Whether this start may create the `dev` user and print its key. */
export function mayCreateDevelopmentKey(
  setting: AppConfig['devKeyOnStart'],
  nodeEnv: string | undefined,
): boolean {
  if (setting === 'auto') return nodeEnv !== 'production';
  return setting === 'true';
}

// The quick start stays two commands: on a fresh installation (no users at all) the first API
// to start creates a `dev` user and prints its key, once. A hosted installation
// (NODE_ENV=production, or DEV_KEY_ON_START=false) never does; its users come from the admin
// routes.
@Injectable()
export class DevelopmentKey implements OnApplicationBootstrap {
  private readonly logger = new Logger('accounts');

  constructor(
    @Inject(AUTH_CONFIG) private readonly config: AppConfig,
    private readonly accounts: AccountsRepository,
  ) {}

  onApplicationBootstrap(): void {
    if (!mayCreateDevelopmentKey(this.config.devKeyOnStart, process.env.NODE_ENV)) return;
    // Not awaited: the API starts (and answers /health 503) while Postgres is still down.
    void this.announce().catch((error: unknown) =>
      this.logger.warn(
        `could not look for a development key: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  }

  private async announce(): Promise<void> {
    const created = await this.accounts.createDevelopmentKeyIfNoUsers();
    if (!created) return;
    this.logger.log(
      `development API key for user "dev" (shown once; send it as "Authorization: Bearer <key>"): ${created.key}`,
    );
  }
}
