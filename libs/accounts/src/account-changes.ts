import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ControlPlane } from '@chronicle/platform';
import { AccountsRepository, type User, type UserChange } from './accounts.repository';
import { DailyTokenBudget } from './token-budget';

// Every process keeps account rows it has read for a few seconds: the API the keys it has
// checked (with their user), every process the owners' own budgets. A revoke or a change must
// reach all of them at once, not when each copy expires: the process that writes it announces it
// on the control plane, and every process, the writer too, forgets its copy. The caches' TTL
// stays the bound for a process that missed the announcement.
@Injectable()
export class AccountChanges implements OnModuleInit {
  private readonly logger = new Logger('accounts');

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly budget: DailyTokenBudget,
    private readonly controlPlane: ControlPlane,
  ) {}

  onModuleInit(): void {
    this.controlPlane.whenKeyRevoked((prefix) => this.accounts.forgetKey(prefix));
    this.controlPlane.whenUserChanged((userId) => {
      this.accounts.forgetUser(userId);
      this.budget.forgetOwner(userId);
    });
  }

  /** Revokes a key of this user and tells every process; false when there is no such key. */
  async revokeKey(userId: string, keyId: string): Promise<boolean> {
    const revoked = await this.accounts.revokeKey(userId, keyId);
    if (!revoked) return false;
    await this.announce(`key ${keyId} revoked`, () =>
      this.controlPlane.announceKeyRevoked(revoked.prefix),
    );
    return true;
  }

  /** Changes a user and tells every process; null when there is no such user. */
  async updateUser(userId: string, change: UserChange): Promise<User | null> {
    const user = await this.accounts.updateUser(userId, change);
    if (!user) return null;
    this.budget.forgetOwner(userId);
    await this.announce(`user ${userId} changed`, () =>
      this.controlPlane.announceUserChanged(userId),
    );
    return user;
  }

  /**
   * The change is written: a failed announcement leaves the other processes on their caches'
   * TTL, and the admin still gets the answer the database gave.
   */
  private async announce(what: string, send: () => Promise<void>): Promise<void> {
    await send().catch((error: Error) =>
      this.logger.warn(
        `${what}, but other processes were not told (their cached copy expires within its TTL): ${error.message}`,
      ),
    );
  }
}
