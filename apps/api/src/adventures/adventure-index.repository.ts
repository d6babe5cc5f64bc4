import { Inject, Injectable } from '@nestjs/common';
import { ADVENTURE_STREAM_PREFIX, adventureStreamId } from '@chronicle/adventure';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import type { Kysely } from 'kysely';

// The two lookups the API needs that the event store does not offer: where one event sits in
// its stream (to answer a resent action with the original turn's version), and which
// adventures exist (the list; which of them a user owns is libs/accounts' to say).

@Injectable()
export class AdventureIndexRepository {
  constructor(@Inject(EVENT_STORE_DB) private readonly db: Kysely<Database>) {}

  /** The stream version of event `eventId` in the adventure's stream, or null. */
  async versionOfEvent(adventureId: string, eventId: string): Promise<number | null> {
    const row = await this.db
      .selectFrom('events')
      .select('version')
      .where('stream_id', '=', adventureStreamId(adventureId))
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    return row?.version ?? null;
  }

  /** Event `eventId` of the adventure's stream as stored, or null. */
  async eventById(
    adventureId: string,
    eventId: string,
  ): Promise<{ version: number; type: string; data: unknown; metadata: unknown } | null> {
    const row = await this.db
      .selectFrom('events')
      .select(['version', 'type', 'data', 'metadata'])
      .where('stream_id', '=', adventureStreamId(adventureId))
      .where('event_id', '=', eventId)
      .executeTakeFirst();
    return row ?? null;
  }

  /** Adventure ids in stream-id order, after `after` (keyset paging). */
  async listAdventureIds(after: string | undefined, limit: number): Promise<string[]> {
    let query = this.db
      .selectFrom('streams')
      .select('stream_id')
      // `_` is a LIKE wildcard; the prefix holds none, and `-` is literal.
      .where('stream_id', 'like', `${ADVENTURE_STREAM_PREFIX}%`)
      .orderBy('stream_id')
      .limit(limit);
    if (after !== undefined) query = query.where('stream_id', '>', adventureStreamId(after));
    const rows = await query.execute();
    return rows.map((row) => row.stream_id.slice(ADVENTURE_STREAM_PREFIX.length));
  }
}
