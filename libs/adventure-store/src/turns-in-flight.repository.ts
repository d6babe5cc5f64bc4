import { adventureIdOfStream, adventureStreamId } from '@chronicle/adventure';
import type { Database } from '@chronicle/event-store';
import { type Kysely, sql } from 'kysely';

// The turns in flight, from the turns_in_flight read model: a row is written by the append of the
// event that starts a turn and deleted by the one that ends it, in the same statement
// (readModelsAfter in libs/adventure, from the event catalogue's turn roles), so it cannot
// disagree with the log. The reconciler reads it to find turns whose narrate job went missing,
// and counts here how often it put one back.

export interface TurnInFlightRow {
  adventureId: string;
  turnId: string;
  /** How often the reconciler has put the turn's job back. */
  requeues: number;
  /** Milliseconds since the turn started, on the database's clock. */
  ageMs: number;
}

export class TurnsInFlightRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Turns in flight for longer than `minAgeMs`, oldest first, at most `limit`. */
  async olderThan(minAgeMs: number, limit: number): Promise<TurnInFlightRow[]> {
    const rows = await this.db
      .selectFrom('turns_in_flight')
      .select([
        'stream_id',
        'turn_id',
        'requeues',
        sql<number>`(extract(epoch FROM now() - started_at) * 1000)::float8`.as('age_ms'),
      ])
      .where(sql<boolean>`started_at < now() - make_interval(secs => ${minAgeMs / 1000})`)
      .orderBy('started_at')
      .limit(limit)
      .execute();
    return rows.flatMap((row) => {
      const adventureId = adventureIdOfStream(row.stream_id);
      return adventureId === null
        ? []
        : [{ adventureId, turnId: row.turn_id, requeues: row.requeues, ageMs: row.age_ms }];
    });
  }

  /** Whether the turn is still in flight (its ending event may have come since it was read). */
  async isInFlight(adventureId: string, turnId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('turns_in_flight')
      .select('turn_id')
      .where('stream_id', '=', adventureStreamId(adventureId))
      .where('turn_id', '=', turnId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Counts one more putting back of the turn's job. */
  async countRequeue(adventureId: string, turnId: string): Promise<void> {
    await this.db
      .updateTable('turns_in_flight')
      .set({ requeues: sql`requeues + 1`, requeued_at: sql`now()` })
      .where('stream_id', '=', adventureStreamId(adventureId))
      .where('turn_id', '=', turnId)
      .execute();
  }
}
