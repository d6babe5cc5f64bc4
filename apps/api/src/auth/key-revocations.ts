import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AccountsRepository } from '@chronicle/accounts';
import { ControlPlane } from '@chronicle/platform';

// Every API instance keeps the keys it has checked for a few seconds (AccountsRepository). A
// revoke must end a key on all of them at once, not when each one's copy expires: the instance
// that revokes announces it on the control plane, and every instance, this one too, forgets the
// key. The cache's TTL stays the bound for an instance that missed the announcement.
@Injectable()
export class KeyRevocations implements OnModuleInit {
  private readonly logger = new Logger('accounts');

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly controlPlane: ControlPlane,
  ) {}

  onModuleInit(): void {
    this.controlPlane.whenKeyRevoked((prefix) => this.accounts.forgetKey(prefix));
  }

  /** Revokes a key of this user and tells every instance; false when there is no such key. */
  async revoke(userId: string, keyId: string): Promise<boolean> {
    const revoked = await this.accounts.revokeKey(userId, keyId);
    if (!revoked) return false;
    // The revoke is written: a failed announcement leaves other instances on their TTL, and the
    // admin still gets the answer the database gave.
    await this.controlPlane
      .announceKeyRevoked(revoked.prefix)
      .catch((error: Error) =>
        this.logger.warn(
          `key ${keyId} revoked, but other API instances were not told (they drop it within their key cache's TTL): ${error.message}`,
        ),
      );
    return true;
  }
}
