/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// The turns the log says are in flight: one row per adventure stream whose last turn event
// started a turn (PlayerActed, RetryRequested) and has no terminal event (Narrated,
// NarrationFailed, NarrationCancelled) yet. The reconciler reads it every few seconds to find a
// turn whose job Redis lost; scanning the log for that would grow with every turn ever played.
//
// Derived from the log, kept by a trigger in the appending transaction (so no appender can
// forget it, and a turn is in this table exactly when its events are committed), and rebuilt
// from the log below. `requeues` is the reconciler's own count of how often it put the turn's
// job back, which bounds a turn whose job keeps vanishing (NarrationFailed {code: "lost"}).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE turns_in_flight (
      stream_id text PRIMARY KEY,
      turn_id text NOT NULL,
      started_at timestamptz NOT NULL,
      requeues integer NOT NULL DEFAULT 0,
      requeued_at timestamptz
    )
  `.execute(db);
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
  // WHEN keeps every other append free of the call (and an event without a turn id out).
  await sql`
    CREATE TRIGGER events_track_turn_in_flight
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type IN ('PlayerActed', 'RetryRequested', 'Narrated', 'NarrationFailed', 'NarrationCancelled')
          AND NEW.stream_id LIKE 'adventure-%'
          AND jsonb_typeof(NEW.data->'turnId') = 'string')
    EXECUTE FUNCTION track_turn_in_flight()
  `.execute(db);

  // The turns in flight today, from the log: each adventure's last turn event, when it starts one.
  await sql`
    INSERT INTO turns_in_flight (stream_id, turn_id, started_at)
    SELECT stream_id, data->>'turnId', recorded_at
      FROM (
        SELECT DISTINCT ON (stream_id) stream_id, type, data, recorded_at
          FROM events
         WHERE stream_id LIKE 'adventure-%'
           AND jsonb_typeof(data->'turnId') = 'string'
           AND type IN ('PlayerActed', 'RetryRequested', 'Narrated', 'NarrationFailed', 'NarrationCancelled')
         ORDER BY stream_id, version DESC
      ) last
     WHERE type IN ('PlayerActed', 'RetryRequested')
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER events_track_turn_in_flight ON events`.execute(db);
  await sql`DROP FUNCTION track_turn_in_flight()`.execute(db);
  await sql`DROP TABLE turns_in_flight`.execute(db);
}
