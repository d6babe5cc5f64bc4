import { ADVENTURE_STREAM_PREFIX, adventureStreamId } from '@chronicle/adventure';
import type { Kysely } from 'kysely';
import type { Database } from '@chronicle/event-store';
import { LruCache } from '@chronicle/platform';

// Who owns which adventure, from the adventure_owners read model: written by the append of an
// adventure's first event, in the same statement (libs/adventure's read-models.ts), so it
// cannot disagree with the log; indexed by owner for the count and the list.
//
// An adventure's owner is written once, in its first event, and no event changes it, so an
// owner read once is kept in memory without expiry: every request on an adventure checks it, and
// only the first one per process asks the database. "Not found" is not kept (the adventure may be
// created a moment later).

const OWNER_CACHE_SIZE = 50_000;

export class AdventureOwners {
  private readonly owners = new LruCache<string, string>({ capacity: OWNER_CACHE_SIZE });

  constructor(private readonly db: Kysely<Database>) {}

  /** The owner's id, or null when the adventure does not exist. */
  async ownerOf(adventureId: string): Promise<string | null> {
    const known = this.owners.get(adventureId);
    if (known !== undefined) return known;
    const row = await this.db
      .selectFrom('adventure_owners')
      .select('owner_id')
      .where('stream_id', '=', adventureStreamId(adventureId))
      .executeTakeFirst();
    const owner = row?.owner_id ?? null;
    if (owner !== null) this.owners.set(adventureId, owner);
    return owner;
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
