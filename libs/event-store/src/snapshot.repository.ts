import { type Kysely } from 'kysely';
import type { Database } from './database';
import type { Snapshot } from './event-store.types';

export class SnapshotRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Keeps the newest snapshot per stream and projector version: a slower
   * writer holding an older state never replaces a newer one.
   */
  async saveSnapshot(
    streamId: string,
    projectorVersion: number,
    version: number,
    state: unknown,
    trx?: Kysely<Database>,
  ): Promise<void> {
    await (trx ?? this.db)
      .insertInto('snapshots')
      .values({
        stream_id: streamId,
        projector_version: projectorVersion,
        version,
        state: JSON.stringify(state),
      })
      .onConflict((oc) =>
        oc
          .columns(['stream_id', 'projector_version'])
          .doUpdateSet((eb) => ({
            version: eb.ref('excluded.version'),
            state: eb.ref('excluded.state'),
            created_at: eb.ref('excluded.created_at'),
          }))
          .where('snapshots.version', '<=', (eb) => eb.ref('excluded.version')),
      )
      .execute();
  }

  async loadSnapshot<State = unknown>(
    streamId: string,
    projectorVersion: number,
    trx?: Kysely<Database>,
  ): Promise<Snapshot<State> | undefined> {
    const row = await (trx ?? this.db)
      .selectFrom('snapshots')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('projector_version', '=', projectorVersion)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      streamId: row.stream_id,
      projectorVersion: row.projector_version,
      version: row.version,
      state: row.state as State,
      createdAt: row.created_at,
    };
  }
}
