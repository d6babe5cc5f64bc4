/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';
import { up as createOneStatementFunction } from './20251201090000-append-to-stream-one-statement';
import { up as createTurnsInFlight } from './20261201110000-create-turns-in-flight';

// The read models are written with the events (libs/adventure's read-models.ts decides their
// rows from the decided events and the new state; the event store writes them in the same
// statement as the events and the outbox):
// - turns_in_flight was kept by a trigger with its own list of the events that start and end a
//   turn, which had drifted from the projector's (a turn an onModelContext script stopped stayed
//   in it for ever). The trigger goes; the command handler says which turn is in flight.
// - adventure_owners: who owns which adventure, which accounts read from AdventureCreated's JSON
//   through an expression index.
// - model_calls: one row per paid model call, charged to the adventure's owner, which the daily
//   budget and the cost ledger summed from the events' JSON with a join per question. Exact
//   instants are kept (the ledger's window is any [from, to)), indexed by user and time.
// `append_to_stream` takes the rows as a fifth argument (`p_read`), and both append paths hand
// them to `write_read_models`, so they are written only when the append is.
//
// Existing databases are filled from the log below; the two expression indexes over events'
// JSON that only those readers used go (one index fewer to keep on every append each).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER events_track_turn_in_flight ON events`.execute(db);
  await sql`DROP FUNCTION track_turn_in_flight()`.execute(db);

  await sql`
    CREATE TABLE adventure_owners (
      stream_id text PRIMARY KEY,
      owner_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  await sql`CREATE INDEX adventure_owners_owner_idx ON adventure_owners (owner_id, stream_id)`.execute(
    db,
  );
  await sql`
    CREATE TABLE model_calls (
      stream_id text NOT NULL,
      version integer NOT NULL,
      user_id text NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      purpose text NOT NULL,
      model text NOT NULL,
      prompt_tokens bigint NOT NULL,
      completion_tokens bigint NOT NULL,
      cached_tokens bigint NOT NULL,
      PRIMARY KEY (stream_id, version)
    )
  `.execute(db);
  await sql`CREATE INDEX model_calls_user_idx ON model_calls (user_id, recorded_at)`.execute(db);
  await sql`CREATE INDEX model_calls_recorded_at_idx ON model_calls (recorded_at)`.execute(db);

  // p_base: the stream's version before the batch; a model call's offset is its place in it.
  await sql`
    CREATE FUNCTION write_read_models(p_stream_id text, p_base integer, p_read jsonb)
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
                                 prompt_tokens, completion_tokens, cached_tokens)
        SELECT p_stream_id, p_base + (c->>'offset')::integer, c->>'userId', c->>'purpose',
               c->>'model', (c->>'promptTokens')::bigint, (c->>'completionTokens')::bigint,
               (c->>'cachedTokens')::bigint
          FROM jsonb_array_elements(p_read->'modelCalls') c;
      END IF;
      RETURN 1;
    END
    $fn$
  `.execute(db);

  await sql`DROP FUNCTION append_to_stream(text, integer, jsonb, jsonb)`.execute(db);
  await sql`
    CREATE FUNCTION append_to_stream(
      p_stream_id text,
      p_expected_version integer,
      p_events jsonb,
      p_outbox jsonb,
      p_read jsonb,
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
      v_base integer := p_expected_version;
      v_locked boolean := false;
      v_found integer;
    BEGIN
      IF v_count = 0 THEN
        RAISE EXCEPTION 'append_to_stream: no events to append to %', p_stream_id;
      END IF;

      LOOP
        IF v_base IS NOT NULL THEN
          -- Outbox ids are drawn before their rows are written so a job
          -- without its own id gets one derived from its row: still
          -- deterministic for every later enqueue of it.
          WITH moved AS (
            UPDATE streams SET version = v_base + v_count, updated_at = now()
             WHERE stream_id = p_stream_id AND version = v_base
            RETURNING 1
          ), inserted AS (
            INSERT INTO events (stream_id, version, event_id, type, schema_version, data, metadata)
            SELECT p_stream_id, v_base + x.ord::integer, (x.value->>'id')::uuid,
                   x.value->>'type', (x.value->>'schemaVersion')::integer, x.value->'data',
                   coalesce(x.value->'metadata', '{}'::jsonb)
              FROM moved, jsonb_array_elements(p_events) WITH ORDINALITY AS x(value, ord)
             ORDER BY x.ord
            RETURNING events.position, events.version
          ), numbered AS MATERIALIZED (
            SELECT r.*, coalesce(r.value->>'jobId', (r.value->>'jobName') || '-outbox-' || r.id) AS job_id
              FROM (
                SELECT nextval('outbox_id_seq') AS id, o.value, o.ord
                  FROM moved, jsonb_array_elements(coalesce(p_outbox, '[]'::jsonb)) WITH ORDINALITY AS o(value, ord)
              ) r
          ), enqueued AS (
            INSERT INTO outbox (id, queue, job_name, job_id, payload)
            SELECT n.id, n.value->>'queue', n.value->>'jobName', n.job_id, n.value->'payload'
              FROM numbered n
          )
          SELECT (SELECT array_agg(i.position ORDER BY i.version) FROM inserted i),
                 (SELECT array_agg(n.id ORDER BY n.ord) FROM numbered n),
                 (SELECT array_agg(n.job_id ORDER BY n.ord) FROM numbered n)
            INTO positions, outbox_ids, outbox_job_ids;
          IF positions IS NOT NULL THEN
            IF p_read IS NOT NULL THEN
              PERFORM write_read_models(p_stream_id, v_base, p_read);
            END IF;
            status := 'appended';
            current_version := v_base;
            next_version := v_base + v_count;
            RETURN;
          END IF;
          IF v_locked THEN
            RAISE EXCEPTION 'append_to_stream: % is locked at version % but did not move', p_stream_id, v_base;
          END IF;
        END IF;

        -- Slow path: lock the stream's row (creating it for a first append),
        -- then tell a retry from a conflict.
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

        v_base := current_version;
        v_locked := true;
      END LOOP;
    END
    $fn$
  `.execute(db);

  await backfill(db);
  await sql`DROP INDEX events_adventure_owner`.execute(db);
  await sql`DROP INDEX events_narrated_at`.execute(db);
}

/** The read models of the log as it stands (the last time they are read from its JSON). */
async function backfill(db: Kysely<any>): Promise<void> {
  await sql`
    INSERT INTO adventure_owners (stream_id, owner_id, created_at)
    SELECT stream_id, data->>'ownerId', recorded_at
      FROM events
     WHERE type = 'AdventureCreated' AND stream_id LIKE 'adventure-%'
       AND jsonb_typeof(data->'ownerId') = 'string'
    ON CONFLICT (stream_id) DO NOTHING
  `.execute(db);
  // As the budget summed them: paid calls (not the offline narrator), not imported.
  await sql`
    INSERT INTO model_calls (stream_id, version, user_id, recorded_at, purpose, model,
                             prompt_tokens, completion_tokens, cached_tokens)
    SELECT n.stream_id, n.version, o.owner_id, n.recorded_at,
           CASE n.type
             WHEN 'Narrated' THEN 'narration'
             WHEN 'MemoryWritten' THEN 'memory'
             WHEN 'SummaryWritten' THEN 'summary'
             ELSE coalesce(n.data ->> 'purpose', 'other')
           END,
           coalesce(n.data -> 'usage' ->> 'model', n.data ->> 'model', ''),
           coalesce((n.data -> 'usage' ->> 'promptTokens')::bigint, 0),
           coalesce((n.data -> 'usage' ->> 'completionTokens')::bigint, 0),
           coalesce((n.data -> 'usage' ->> 'cachedTokens')::bigint, 0)
      FROM events n
      JOIN adventure_owners o ON o.stream_id = n.stream_id
     WHERE n.type IN ('Narrated', 'MemoryWritten', 'SummaryWritten', 'ModelUsageRecorded')
       AND n.data ? 'usage'
       AND n.data ->> 'narrator' IS DISTINCT FROM 'offline'
       AND NOT (coalesce(n.metadata, '{}'::jsonb) ? 'importedFrom')
    ON CONFLICT (stream_id, version) DO NOTHING
  `.execute(db);
  // The turns the trigger left behind: stopped by a script, which its list did not name.
  await sql`
    DELETE FROM turns_in_flight t
     USING events e
     WHERE e.stream_id = t.stream_id AND e.type = 'TurnStoppedByScript'
       AND e.data->>'turnId' = t.turn_id
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION append_to_stream(text, integer, jsonb, jsonb, jsonb)`.execute(db);
  await createOneStatementFunction(db);
  await sql`DROP FUNCTION write_read_models(text, integer, jsonb)`.execute(db);
  await sql`DROP TABLE model_calls`.execute(db);
  await sql`DROP TABLE adventure_owners`.execute(db);
  await sql`
    CREATE INDEX events_adventure_owner ON events ((data ->> 'ownerId'), stream_id)
    WHERE type = 'AdventureCreated'
  `.execute(db);
  await sql`
    CREATE INDEX events_narrated_at ON events (stream_id, recorded_at) WHERE type = 'Narrated'
  `.execute(db);
  // The trigger comes back with the table's own migration, which rebuilds it from the log (the
  // reconciler's requeue counts start again).
  await sql`DROP TABLE turns_in_flight`.execute(db);
  await createTurnsInFlight(db);
}
