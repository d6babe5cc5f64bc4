import { ADVENTURE_STREAM_PREFIX, adventureStreamId, type RoomRole } from '@chronicle/adventure';
import type { Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';

// Who owns which adventure, and who else is in its room, from the adventure_owners and
// adventure_members read models: written by the append of the events that change them, in the
// same statement (libs/adventure's read-models.ts), so they cannot disagree with the log; indexed
// by user for the count and the lists.
//
// Nothing here is cached in a process: a hand-over moves the owner, and a kick, a ban or a role
// change must hold on every API process from the append on. Each answer is one lookup of a
// primary key (the access check asks once per request on an adventure).

export class AdventureOwners {
  constructor(private readonly db: Kysely<Database>) {}

  /** The owner's id (the room's host), or null when the adventure does not exist. */
  async ownerOf(adventureId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('adventure_owners')
      .select('owner_id')
      .where('stream_id', '=', adventureStreamId(adventureId))
      .executeTakeFirst();
    return row?.owner_id ?? null;
  }

  /** The user's role in the adventure's room, or null: not a member, or no such adventure. */
  async roleOf(adventureId: string, userId: string): Promise<RoomRole | null> {
    const row = await this.db
      .selectFrom('adventure_members')
      .select('role')
      .where('stream_id', '=', adventureStreamId(adventureId))
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.role ?? null;
  }

  async isOwnedBy(adventureId: string, userId: string): Promise<boolean> {
    return (await this.ownerOf(adventureId)) === userId;
  }

  async countOwnedBy(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('adventure_owners')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('owner_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** The adventure an invite code leads to, or null: no such code (or it was revoked). */
  async adventureOfInvite(code: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('adventure_invites')
      .select('stream_id')
      .where('code', '=', code)
      .executeTakeFirst();
    return row ? row.stream_id.slice(ADVENTURE_STREAM_PREFIX.length) : null;
  }

  /** The adventures the user is a member of (owned ones included), in id order, after `after`. */
  async listMemberOf(userId: string, after: string | undefined, limit: number): Promise<string[]> {
    let query = this.db
      .selectFrom('adventure_members')
      .select('stream_id')
      .where('user_id', '=', userId)
      .orderBy('stream_id')
      .limit(limit);
    if (after !== undefined) query = query.where('stream_id', '>', adventureStreamId(after));
    const rows = await query.execute();
    return rows.map((row) => row.stream_id.slice(ADVENTURE_STREAM_PREFIX.length));
  }

  /** The user's adventure ids in id order, after `after` (keyset paging). */
  async listOwnedBy(userId: string, after: string | undefined, limit: number): Promise<string[]> {
    let query = this.db
      .selectFrom('adventure_owners')
      .select('stream_id')
      .where('owner_id', '=', userId)
      .orderBy('stream_id')
      .limit(limit);
    if (after !== undefined) query = query.where('stream_id', '>', adventureStreamId(after));
    const rows = await query.execute();
    return rows.map((row) => row.stream_id.slice(ADVENTURE_STREAM_PREFIX.length));
  }
}
