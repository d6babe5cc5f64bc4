import { promisify } from 'node:util';
import { brotliCompress, brotliDecompressSync, constants } from 'node:zlib';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, SnapshotsTable } from './database';
import type { Snapshot } from './event-store.types';

export interface SnapshotRepositoryOptions {
  /**
   * Checkpoint spacing in stream versions: besides the latest snapshot, the oldest one in each
   * stretch of this many versions is kept, so a read at any version folds at most about this
   * many events from a snapshot below it. The rest are pruned when a newer one is saved.
   */
  checkpointEvery?: number;
}

export const DEFAULT_CHECKPOINT_EVERY = 1_000;

const compress = promisify(brotliCompress);
// A low quality: a snapshot is repetitive (ids, small numbers, recurring state events), so even
// the fast levels shrink it about twentyfold, and the write sits on a command's path.
// Decompressing is fast at any level.
const COMPRESSION = {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 4,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
  },
};

// Snapshots are kept by version (see the 20251130120000 migration): the latest serves loads,
// the checkpoints serve reads at an older version. Storage stays bounded: one row per
// `checkpointEvery` versions plus the latest, about 10 rows for a 10,000-event adventure.
// A snapshot is bytes in its writer's format (the adventure's is adventure-store's
// snapshot.codec.ts): this repository only compresses and keeps them.
export class SnapshotRepository {
  /** See `SnapshotRepositoryOptions`; readers use it to decide when a long fold leaves a checkpoint. */
  readonly checkpointEvery: number;

  constructor(
    private readonly db: Kysely<Database>,
    options: SnapshotRepositoryOptions = {},
  ) {
    this.checkpointEvery = options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
    if (!Number.isInteger(this.checkpointEvery) || this.checkpointEvery < 1) {
      throw new Error(`checkpointEvery must be a positive integer, got ${this.checkpointEvery}`);
    }
  }

  /**
   * Stores the state at `version` (replacing one stored at the same version) and prunes the
   * snapshots that are neither the latest nor a checkpoint. A slower writer holding an older
   * state never hides a newer one: loads take the highest version.
   */
  async saveSnapshot(
    streamId: string,
    projectorVersion: number,
    version: number,
    bytes: Uint8Array,
    trx?: Kysely<Database>,
  ): Promise<void> {
    const db = trx ?? this.db;
    await db
      .insertInto('snapshots')
      .values({
        stream_id: streamId,
        projector_version: projectorVersion,
        version,
        state: null,
        // Compressed off the event loop (zlib's thread pool): it takes a few milliseconds.
        packed: await compress(bytes, COMPRESSION),
      })
      .onConflict((oc) =>
        oc.columns(['stream_id', 'projector_version', 'version']).doUpdateSet((eb) => ({
          state: eb.ref('excluded.state'),
          packed: eb.ref('excluded.packed'),
          created_at: eb.ref('excluded.created_at'),
        })),
      )
      .execute();
    // Keep the latest and, in each stretch of `checkpointEvery` versions, the oldest.
    await sql`
      DELETE FROM snapshots s
      WHERE s.stream_id = ${streamId}
        AND s.projector_version = ${projectorVersion}
        AND s.version < (
          SELECT max(version) FROM snapshots
          WHERE stream_id = ${streamId} AND projector_version = ${projectorVersion}
        )
        AND EXISTS (
          SELECT 1 FROM snapshots older
          WHERE older.stream_id = s.stream_id
            AND older.projector_version = s.projector_version
            AND older.version < s.version
            AND older.version / ${this.checkpointEvery}::integer = s.version / ${this.checkpointEvery}::integer
        )
    `.execute(db);
  }

  /** The newest snapshot of a stream under a projector version. */
  async loadSnapshot(
    streamId: string,
    projectorVersion: number,
    trx?: Kysely<Database>,
  ): Promise<Snapshot | undefined> {
    return this.loadAtOrBelow(streamId, projectorVersion, null, trx);
  }

  /** The newest snapshot whose version is at or below `version` (for a read at that version). */
  async loadSnapshotAt(
    streamId: string,
    projectorVersion: number,
    version: number,
    trx?: Kysely<Database>,
  ): Promise<Snapshot | undefined> {
    return this.loadAtOrBelow(streamId, projectorVersion, version, trx);
  }

  /** The versions kept for a stream under a projector version, ascending (for tests and tools). */
  async listVersions(
    streamId: string,
    projectorVersion: number,
    trx?: Kysely<Database>,
  ): Promise<number[]> {
    const rows = await (trx ?? this.db)
      .selectFrom('snapshots')
      .select('version')
      .where('stream_id', '=', streamId)
      .where('projector_version', '=', projectorVersion)
      .orderBy('version')
      .execute();
    return rows.map((row) => row.version);
  }

  private async loadAtOrBelow(
    streamId: string,
    projectorVersion: number,
    version: number | null,
    trx?: Kysely<Database>,
  ): Promise<Snapshot | undefined> {
    // Rows the previous release wrote as text are passed over (see the 20251130150000 migration).
    let query = (trx ?? this.db)
      .selectFrom('snapshots')
      .select(['stream_id', 'projector_version', 'version', 'packed', 'created_at'])
      .where('stream_id', '=', streamId)
      .where('projector_version', '=', projectorVersion)
      .where('packed', 'is not', null);
    if (version !== null) query = query.where('version', '<=', version);
    const row: Omit<Selectable<SnapshotsTable>, 'state'> | undefined = await query
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row?.packed) return undefined;
    return {
      streamId: row.stream_id,
      projectorVersion: row.projector_version,
      version: row.version,
      // Synchronously: a snapshot inflates in a third of a millisecond, less than a hop to the
      // thread pool and back would add to the load.
      bytes: brotliDecompressSync(row.packed),
      createdAt: row.created_at,
    };
  }
}
