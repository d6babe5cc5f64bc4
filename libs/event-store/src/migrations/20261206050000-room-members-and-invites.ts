/* eslint-disable @typescript-eslint/no-explicit-any -- a migration runs on Kysely<any>: it must keep working when today's Database type changes. */
import { type Kysely, sql } from 'kysely';

// Rooms (spec/multiplayer.md §3.1), as read models written with the events, like the owners:
// - adventure_members: who may open an adventure and as what (`host`, `player`, `spectator`):
//   the access check's one indexed lookup per request, so a kick, a ban or a role change holds
//   on every API process from the append on. Indexed by user for "the rooms I am in".
// - adventure_invites: an invite code's adventure, for the join route (the code is the secret;
//   its role, uses and expiry are the adventure's projection's, decided there).
// - adventure_owners' owner changes with a hand-over (and an import's reset of the room).
// Existing adventures get their owner as the host. The function is 20261206040000's (model calls
// by member) with the room's rows added.
const WRITE_READ_MODELS = (rooms: boolean) => sql`
  CREATE OR REPLACE FUNCTION write_read_models(p_stream_id text, p_base integer, p_read jsonb)
  RETURNS integer
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    IF p_read ? 'owner' THEN
      INSERT INTO adventure_owners (stream_id, owner_id)
      VALUES (p_stream_id, p_read->>'owner')
      ON CONFLICT (stream_id) DO ${rooms ? sql`UPDATE SET owner_id = EXCLUDED.owner_id WHERE adventure_owners.owner_id <> EXCLUDED.owner_id` : sql`NOTHING`};
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
                               prompt_tokens, completion_tokens, cached_tokens, members)
      SELECT p_stream_id, p_base + (c->>'offset')::integer, c->>'userId', c->>'purpose',
             c->>'model', (c->>'promptTokens')::bigint, (c->>'completionTokens')::bigint,
             (c->>'cachedTokens')::bigint,
             CASE WHEN jsonb_typeof(c->'members') = 'array'
                  THEN ARRAY(SELECT jsonb_array_elements_text(c->'members')) END
        FROM jsonb_array_elements(p_read->'modelCalls') c;
    END IF;
    ${
      rooms
        ? sql`
    IF p_read ? 'members' THEN
      DELETE FROM adventure_members
       WHERE stream_id = p_stream_id
         AND user_id NOT IN (SELECT m->>'userId' FROM jsonb_array_elements(p_read->'members') m);
      INSERT INTO adventure_members (stream_id, user_id, role)
      SELECT p_stream_id, m->>'userId', m->>'role' FROM jsonb_array_elements(p_read->'members') m
      ON CONFLICT (stream_id, user_id) DO UPDATE SET role = EXCLUDED.role
        WHERE adventure_members.role <> EXCLUDED.role;
    END IF;
    IF p_read ? 'invitesAdded' THEN
      INSERT INTO adventure_invites (code, stream_id)
      SELECT c, p_stream_id FROM jsonb_array_elements_text(p_read->'invitesAdded') c
      ON CONFLICT (code) DO NOTHING;
    END IF;
    IF p_read ? 'invitesRemoved' THEN
      DELETE FROM adventure_invites
       WHERE stream_id = p_stream_id
         AND code IN (SELECT jsonb_array_elements_text(p_read->'invitesRemoved'));
    END IF;`
        : sql``
    }
    RETURN 1;
  END
  $fn$
`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE adventure_members (
      stream_id text NOT NULL,
      user_id text NOT NULL,
      role text NOT NULL CHECK (role IN ('host', 'player', 'spectator')),
      joined_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (stream_id, user_id)
    )
  `.execute(db);
  await sql`CREATE INDEX adventure_members_user_idx ON adventure_members (user_id, stream_id)`.execute(
    db,
  );
  await sql`
    CREATE TABLE adventure_invites (
      code text PRIMARY KEY,
      stream_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  await sql`CREATE INDEX adventure_invites_stream_idx ON adventure_invites (stream_id)`.execute(db);
  await sql`
    INSERT INTO adventure_members (stream_id, user_id, role, joined_at)
    SELECT stream_id, owner_id, 'host', created_at FROM adventure_owners
  `.execute(db);
  await WRITE_READ_MODELS(true).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await WRITE_READ_MODELS(false).execute(db);
  await sql`DROP TABLE adventure_invites`.execute(db);
  await sql`DROP TABLE adventure_members`.execute(db);
}
