/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Who pays in a room (spec/multiplayer.md §3.5): a room's model calls stay charged to its host
// (`user_id`, the adventure's owner when the call was appended), and each now also names the
// members whose actions it answered (`members`: null in a one-player adventure, and for a call
// that answered no one's action, such as a memory pass). A call answering several members (a
// closed round, `free`'s held actions) is split evenly among them when summed: the per-player
// daily cap and the ledger's by-member grouping read it so. Existing rows are one player's.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE model_calls ADD COLUMN members text[]`.execute(db);
  await sql`
    CREATE INDEX model_calls_room_idx ON model_calls (stream_id, recorded_at)
    WHERE members IS NOT NULL
  `.execute(db);
  await writeReadModels(db, true);
}

export async function down(db: Kysely<any>): Promise<void> {
  await writeReadModels(db, false);
  await sql`DROP INDEX model_calls_room_idx`.execute(db);
  await sql`ALTER TABLE model_calls DROP COLUMN members`.execute(db);
}

/** write_read_models as 20261205210000 made it, with or without the members of each call. */
async function writeReadModels(db: Kysely<any>, withMembers: boolean): Promise<void> {
  const columns = withMembers ? sql`, members` : sql``;
  const values = withMembers
    ? sql`, CASE WHEN jsonb_typeof(c->'members') = 'array'
                 THEN ARRAY(SELECT jsonb_array_elements_text(c->'members')) END`
    : sql``;
  await sql`
    CREATE OR REPLACE FUNCTION write_read_models(p_stream_id text, p_base integer, p_read jsonb)
    RETURNS integer
    LANGUAGE plpgsql
    AS $fn$
    BEGIN
      IF p_read ? 'owner' THEN
        INSERT INTO adventure_owners (stream_id, owner_id)
        VALUES (p_stream_id, p_read->>'owner')
        ON CONFLICT (stream_id) DO NOTHING;
      END IF;
      IF p_read ? 'turnInFlight' THEN
        IF jsonb_typeof(p_read->'turnInFlight') = 'string' THEN
          INSERT INTO turns_in_flight (stream_id, turn_id, started_at)
          VALUES (p_stream_id, p_read->>'turnInFlight', now())
          ON CONFLICT (stream_id) DO UPDATE
            SET turn_id = EXCLUDED.turn_id, started_at = EXCLUDED.started_at,
                requeues = 0, requeued_at = NULL
            WHERE turns_in_flight.turn_id <> EXCLUDED.turn_id;
        ELSE
          DELETE FROM turns_in_flight WHERE stream_id = p_stream_id;
        END IF;
      END IF;
      IF p_read ? 'modelCalls' THEN
        INSERT INTO model_calls (stream_id, version, user_id, purpose, model,
                                 prompt_tokens, completion_tokens, cached_tokens${columns})
        SELECT p_stream_id, p_base + (c->>'offset')::integer, c->>'userId', c->>'purpose',
               c->>'model', (c->>'promptTokens')::bigint, (c->>'completionTokens')::bigint,
               (c->>'cachedTokens')::bigint${values}
          FROM jsonb_array_elements(p_read->'modelCalls') c;
      END IF;
      RETURN 1;
    END
    $fn$
  `.execute(db);
}
