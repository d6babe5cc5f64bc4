/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// One function call per append: the stream's row lock, the idempotency check,
// the version check, the events, the stream's new version and the outbox rows
// all happen in one round trip. A client-side transaction doing the same takes
// four or more round trips per append, each holding the stream's lock, and at
// 8 concurrent clients that wait is most of an append's latency.
//
// Outcomes are returned, not raised, so a conflict inside a caller's
// transaction does not abort that transaction:
//   appended          - inserted; positions, next_version and the outbox ids
//   duplicate         - every event id was already in the stream: the original
//                       positions and the version after the last of them
//   partial_duplicate - some ids stored, some not: the caller sent a different batch
//   conflict          - current_version is not the expected one
// p_expected_version: a version (0 = the stream has no events), or null = any.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION append_to_stream(
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
      v_outbox_seq regclass := pg_get_serial_sequence('outbox', 'id')::regclass;
    BEGIN
      IF v_count = 0 THEN
        RAISE EXCEPTION 'append_to_stream: no events to append to %', p_stream_id;
      END IF;

      -- The stream's row serialises appends to this stream. Read committed:
      -- after waiting for the lock we see the version the winner wrote, and the
      -- following statements see the winner's events.
      SELECT s.version INTO current_version
        FROM streams s WHERE s.stream_id = p_stream_id FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO streams (stream_id, version) VALUES (p_stream_id, 0)
          ON CONFLICT (stream_id) DO NOTHING;
        SELECT s.version INTO current_version
          FROM streams s WHERE s.stream_id = p_stream_id FOR UPDATE;
      END IF;

      -- Idempotency comes before the version check: a retry of an append that
      -- succeeded sees a moved version, yet must get the original answer.
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

      next_version := current_version + v_count;
      UPDATE streams SET version = next_version, updated_at = now()
       WHERE stream_id = p_stream_id;

      IF p_outbox IS NOT NULL AND jsonb_array_length(p_outbox) > 0 THEN
        -- Ids are drawn first so a job without its own id gets one derived
        -- from its row: still deterministic for every later enqueue of it.
        WITH numbered AS MATERIALIZED (
          SELECT r.*, coalesce(r.value->>'jobId', (r.value->>'jobName') || '-outbox-' || r.id) AS job_id
            FROM (
              SELECT nextval(v_outbox_seq) AS id, o.value, o.ord
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

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION append_to_stream(text, integer, jsonb, jsonb)`.execute(db);
}
