/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// turns_in_flight (20261201110000) cost every turn event's append a second write: the trigger's
// upsert or delete, its index entries and a plpgsql call that tested the event type again. Made
// cheaper, with the same contents (a turn is in the table exactly while the log has it in flight):
// - no index on started_at: the table holds only the turns in flight (one row per adventure at
//   most, deleted when its turn ends), which the reconciler reads whole every few seconds, so
//   sorting it costs less than keeping an index current on every turn's two writes;
// - fillfactor 50: room on the row's page, so a turn started over an unfinished one (an import,
//   a retry) updates the row in place (HOT: no new index entry for the primary key either);
// - two triggers, one statement each: the start of a turn upserts, its end deletes, each chosen
//   by its own WHEN (evaluated without calling a function), so no call tests the type again.
// The bench (`npm run bench -- event-store`, "turns_in_flight upkeep") measures appends under
// the previous trigger and under these, in one run.
const TURN_EVENT = `NEW.stream_id LIKE 'adventure-%' AND jsonb_typeof(NEW.data->'turnId') = 'string'`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER events_track_turn_in_flight ON events`.execute(db);
  await sql`DROP FUNCTION track_turn_in_flight()`.execute(db);
  await sql`DROP INDEX turns_in_flight_started_at_idx`.execute(db);
  await sql`ALTER TABLE turns_in_flight SET (fillfactor = 50)`.execute(db);

  await sql`
    CREATE FUNCTION turn_in_flight_started() RETURNS trigger
    LANGUAGE plpgsql
    AS $fn$
    BEGIN
      INSERT INTO turns_in_flight (stream_id, turn_id, started_at)
      VALUES (NEW.stream_id, NEW.data->>'turnId', NEW.recorded_at)
      ON CONFLICT (stream_id) DO UPDATE
        SET turn_id = EXCLUDED.turn_id, started_at = EXCLUDED.started_at,
            requeues = 0, requeued_at = NULL;
      RETURN NULL;
    END
    $fn$
  `.execute(db);
  await sql`
    CREATE FUNCTION turn_in_flight_ended() RETURNS trigger
    LANGUAGE plpgsql
    AS $fn$
    BEGIN
      DELETE FROM turns_in_flight
       WHERE stream_id = NEW.stream_id AND turn_id = NEW.data->>'turnId';
      RETURN NULL;
    END
    $fn$
  `.execute(db);
  await sql`
    CREATE TRIGGER events_turn_in_flight_started
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type IN ('PlayerActed', 'RetryRequested') AND ${sql.raw(TURN_EVENT)})
    EXECUTE FUNCTION turn_in_flight_started()
  `.execute(db);
  await sql`
    CREATE TRIGGER events_turn_in_flight_ended
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type IN ('Narrated', 'NarrationFailed', 'NarrationCancelled') AND ${sql.raw(TURN_EVENT)})
    EXECUTE FUNCTION turn_in_flight_ended()
  `.execute(db);
}

/** Back to 20261201110000's trigger and index (the bench measures both in one run). */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER events_turn_in_flight_started ON events`.execute(db);
  await sql`DROP TRIGGER events_turn_in_flight_ended ON events`.execute(db);
  await sql`DROP FUNCTION turn_in_flight_started()`.execute(db);
  await sql`DROP FUNCTION turn_in_flight_ended()`.execute(db);
  await sql`ALTER TABLE turns_in_flight RESET (fillfactor)`.execute(db);
  await sql`CREATE INDEX turns_in_flight_started_at_idx ON turns_in_flight (started_at)`.execute(
    db,
  );
  await sql`
    CREATE FUNCTION track_turn_in_flight() RETURNS trigger
    LANGUAGE plpgsql
    AS $fn$
    BEGIN
      IF NEW.type IN ('PlayerActed', 'RetryRequested') THEN
        INSERT INTO turns_in_flight (stream_id, turn_id, started_at)
        VALUES (NEW.stream_id, NEW.data->>'turnId', NEW.recorded_at)
        ON CONFLICT (stream_id) DO UPDATE
          SET turn_id = EXCLUDED.turn_id, started_at = EXCLUDED.started_at,
              requeues = 0, requeued_at = NULL;
      ELSE
        DELETE FROM turns_in_flight
         WHERE stream_id = NEW.stream_id AND turn_id = NEW.data->>'turnId';
      END IF;
      RETURN NULL;
    END
    $fn$
  `.execute(db);
  await sql`
    CREATE TRIGGER events_track_turn_in_flight
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type IN ('PlayerActed', 'RetryRequested', 'Narrated', 'NarrationFailed', 'NarrationCancelled')
          AND ${sql.raw(TURN_EVENT)})
    EXECUTE FUNCTION track_turn_in_flight()
  `.execute(db);
}
