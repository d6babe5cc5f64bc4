/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';
import { up as createPreviousFunction } from './20251129180300-create-append-to-stream-function';

// Same contract as 20251129180300, one statement cheaper in the common case:
// when the stream is at the expected version, a single conditional UPDATE
// takes the stream's row lock and moves the version, and the idempotency
// lookup is skipped (a batch already stored sits at versions up to the
// current one, so a retry of it always carries an older expected version and
// takes the slow path). A concurrent appender at the same version waits on
// the row lock, then finds the version moved, matches nothing and takes the
// slow path, which tells a conflict from a retry exactly as before.
// A fast-path batch that reuses a stored id (a caller bug) fails on the
// unique (stream_id, event_id) constraint.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION append_to_stream(
      p_stream_id text,
      p_expected_version integer,
      p_events jsonb,
      p_outbox jsonb,
      OUT status text,
      OUT current_version integer,
      OUT next_version integer,
      OUT positions bigint[],
      OUT outbox_ids bigint[],
      OUT outbox_job_ids text[]
    )
    LANGUAGE plpgsql
    AS $fn$
    DECLARE
      v_count integer := jsonb_array_length(p_events);
      v_found integer;
      v_claimed boolean := false;
    BEGIN
      IF v_count = 0 THEN
        RAISE EXCEPTION 'append_to_stream: no events to append to %', p_stream_id;
      END IF;

      IF p_expected_version = 0 THEN
        INSERT INTO streams (stream_id, version) VALUES (p_stream_id, v_count)
          ON CONFLICT (stream_id) DO NOTHING;
        v_claimed := FOUND;
        IF NOT v_claimed THEN
          -- A row left at version 0 (a stream created by an earlier conflict).
          UPDATE streams SET version = v_count, updated_at = now()
           WHERE stream_id = p_stream_id AND version = 0;
          v_claimed := FOUND;
        END IF;
      ELSIF p_expected_version IS NOT NULL THEN
        UPDATE streams SET version = p_expected_version + v_count, updated_at = now()
         WHERE stream_id = p_stream_id AND version = p_expected_version;
        v_claimed := FOUND;
      END IF;

      IF v_claimed THEN
        current_version := p_expected_version;
      ELSE
        -- Slow path: lock the stream's row (creating it for a first 'any'
        -- append), then tell a retry from a conflict.
        SELECT s.version INTO current_version
          FROM streams s WHERE s.stream_id = p_stream_id FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO streams (stream_id, version) VALUES (p_stream_id, 0)
            ON CONFLICT (stream_id) DO NOTHING;
          SELECT s.version INTO current_version
            FROM streams s WHERE s.stream_id = p_stream_id FOR UPDATE;
        END IF;

        SELECT count(*)::integer, array_agg(e.position ORDER BY e.version), max(e.version)
          INTO v_found, positions, next_version
          FROM events e
         WHERE e.stream_id = p_stream_id
           AND e.event_id IN (SELECT (x->>'id')::uuid FROM jsonb_array_elements(p_events) x);
        IF v_found = v_count THEN
          status := 'duplicate';
          RETURN;
        ELSIF v_found > 0 THEN
          status := 'partial_duplicate';
          positions := NULL;
          next_version := NULL;
          RETURN;
        END IF;

        IF p_expected_version IS NOT NULL AND p_expected_version <> current_version THEN
          status := 'conflict';
          RETURN;
        END IF;

        UPDATE streams SET version = current_version + v_count, updated_at = now()
         WHERE stream_id = p_stream_id;
      END IF;

      next_version := current_version + v_count;

      WITH inserted AS (
        INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata)
        SELECT p_stream_id, current_version + x.ord::integer, (x.value->>'id')::uuid,
               x.value->>'type', (x.value->>'schemaVersion')::integer, x.value->'data',
               coalesce(x.value->'metadata', '{}'::jsonb)
          FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(value, ord)
         ORDER BY x.ord
        RETURNING events.position, events.version
      )
      SELECT array_agg(i.position ORDER BY i.version) INTO positions FROM inserted i;

      IF p_outbox IS NOT NULL AND jsonb_array_length(p_outbox) > 0 THEN
        -- Ids are drawn first so a job without its own id gets one derived
        -- from its row: still deterministic for every later enqueue of it.
        WITH numbered AS MATERIALIZED (
          SELECT r.*, coalesce(r.value->>'jobId', (r.value->>'jobName') || '-outbox-' || r.id) AS job_id
            FROM (
              SELECT nextval(pg_get_serial_sequence('outbox', 'id')) AS id, o.value, o.ord
                FROM jsonb_array_elements(p_outbox) WITH ORDINALITY AS o(value, ord)
            ) r
        ), inserted AS (
          INSERT INTO outbox (id, queue, job_name, job_id, payload)
          SELECT n.id, n.value->>'queue', n.value->>'jobName', n.job_id, n.value->'payload'
            FROM numbered n
        )
        SELECT array_agg(n.id ORDER BY n.ord), array_agg(n.job_id ORDER BY n.ord)
          INTO outbox_ids, outbox_job_ids
          FROM numbered n;
      END IF;

      status := 'appended';
    END
    $fn$
  `.execute(db);
}

// The previous definition comes back by re-running its migration's `up`.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION append_to_stream(text, integer, jsonb, jsonb)`.execute(db);
  await createPreviousFunction(db);
}
