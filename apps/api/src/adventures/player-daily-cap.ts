import { Inject, Injectable } from '@nestjs/common';
import { playerDailyCap } from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { memberTokensIn, RateLimitedError, utcDay } from '@chronicle/accounts';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import type { Kysely } from 'kysely';

/**
 * A room's per-player daily cap (`perPlayerDailyTokens`, spec/multiplayer.md §3.5): a player
 * whose own share of the room's model tokens today reached it is refused (429, naming the
 * setting and its value) while the host and the other players play on. The host pays for the
 * room (their own daily budget, the access guard's and the worker's check) and has no cap here.
 */
@Injectable()
export class PlayerDailyCap {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    @Inject(EVENT_STORE_DB) private readonly db: Kysely<Database>,
  ) {}

  async assertWithin(adventureId: string, userId: string, now = new Date()): Promise<void> {
    const cap = playerDailyCap(await this.adventures.get(adventureId), userId);
    if (cap === null) return;
    const { start, resetsAt } = utcDay(now);
    const used = await memberTokensIn(this.db, adventureId, userId, { from: start, to: resetsAt });
    if (used < cap) return;
    throw new RateLimitedError(
      `your daily model-token cap in this room is spent: perPlayerDailyTokens is ${cap} and your actions used ${used} today; the others play on, and it resets at ${resetsAt.toISOString()} (midnight UTC)`,
      (resetsAt.getTime() - now.getTime()) / 1000,
    );
  }
}
