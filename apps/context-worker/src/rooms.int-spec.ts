// A room's turn policies against the real Postgres, Redis, BullMQ workers and the fake model:
// four players sending at once under `free` (held, narrated together, nothing lost or doubled),
// a round closing when every player is in, on its timer (a BullMQ delayed job) and by the host,
// a retry that keeps every action, and a round's turn whose job Redis lost, put back by the
// reconciler.
import { randomUUID } from 'node:crypto';
import {
  EVENT_SCHEMA_VERSIONS,
  adventureStreamId,
  type AdventureSettings,
  type PlayersActed,
} from '@chronicle/adventure';
import { decideCommand, eventIdsFor, readModelsOf } from '@chronicle/adventure-store';
import {
  createAdventure,
  readEvents,
  setUpNarrateSpec,
  sleep,
  type WorkerHarness,
} from './testing/context-worker.harness';
import { TurnReconciler } from './turn.reconciler';

const CHAT = '/v1/chat/completions';
const NOW = '2026-12-06T00:00:00.000Z';

const spec = setUpNarrateSpec({ fake: { chunkDelayMs: 1 } });

/** An adventure of `owner-1` with `players` joined, under the given room settings. */
async function room(players: string[], settings: Partial<AdventureSettings>): Promise<string> {
  const { harness } = spec;
  const adventureId = await createAdventure(harness);
  const run = (command: Parameters<WorkerHarness['adventures']['handle']>[1]) =>
    harness.adventures.handle(adventureId, command, { actor: 'test' });
  await run({
    type: 'CreateInvite',
    data: {
      code: `invite-${adventureId}`,
      role: 'player',
      maxUses: null,
      expiresInSeconds: null,
      now: NOW,
    },
  });
  for (const userId of players) {
    await run({
      type: 'JoinRoom',
      data: {
        code: `invite-${adventureId}`,
        userId,
        character: { name: userId, pronouns: 'they/them', description: '' },
        now: NOW,
      },
    });
  }
  await run({ type: 'EditAdventure', data: { settings } });
  return adventureId;
}

/** What the API sends for a member's action (the client's id is the key). */
function send(adventureId: string, actorId: string, text: string, actionId = randomUUID()) {
  return spec.harness.adventures.handle(
    adventureId,
    {
      type: 'SubmitAction',
      key: actionId,
      data: { turnId: randomUUID(), inputType: 'do', text, actionId, actorId },
    },
    { actor: `user:${actorId}` },
  );
}

/** Waits until nothing is in flight or waiting (no held action, no round in progress). */
async function settled(adventureId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await spec.harness.adventures.get(adventureId);
    const { held, round } = state.turns;
    if (!state.inFlight && held === null && round.submitted.length === 0) return state;
    if (Date.now() > deadline) throw new Error(`adventure ${adventureId} did not settle`);
    await sleep(50);
  }
}

async function typesOf(adventureId: string): Promise<string[]> {
  return (await readEvents(spec.harness, adventureId)).map((event) => event.type);
}

describe('a room’s turns', () => {
  it('given free, when four players send at once (and resend), then every action is narrated once, held ones together', async () => {
    const adventureId = await room(['ana', 'bo', 'cy'], { turnPolicy: 'free' });
    const sends = ['owner-1', 'ana', 'bo', 'cy'].map((userId) => ({
      userId,
      actionId: randomUUID(),
      text: `${userId} lights a lamp`,
    }));
    await Promise.all(sends.map((s) => send(adventureId, s.userId, s.text, s.actionId)));
    // Every client resends once (a lost answer): nothing is applied twice.
    await Promise.all(
      sends.map((s) => send(adventureId, s.userId, s.text, s.actionId).catch(() => null)),
    );
    const state = await settled(adventureId);

    const nodes = state.path.filter((entry) => entry.type === 'do').map((entry) => entry.id);
    expect(nodes.sort()).toEqual(sends.map((s) => s.actionId).sort());
    const types = await typesOf(adventureId);
    const narrations = types.filter((type) => type === 'Narrated').length;
    const turns = types.filter((type) => type === 'PlayerActed' || type === 'PlayersActed').length;
    expect(narrations).toBe(turns);
    expect(turns).toBeLessThanOrEqual(4);
    expect(types.filter((type) => type === 'ActionHeld').length).toBe(
      4 - types.filter((t) => t === 'PlayerActed').length,
    );
    expect(state.turns.actors).toEqual(
      Object.fromEntries(sends.map((s) => [s.actionId, s.userId])),
    );
  });

  it('given round, when the last player submits, then one narration answers every action and its prompt shows each', async () => {
    const adventureId = await room(['ana', 'bo'], { turnPolicy: 'round' });
    await send(adventureId, 'ana', 'I draw the map');
    await spec.harness.adventures.handle(
      adventureId,
      { type: 'PassRound', data: { userId: 'owner-1' } },
      { actor: 'user:owner-1' },
    );
    const last = await send(adventureId, 'bo', 'I hold the lantern');
    expect(last.events.map((event) => event.type)).toEqual(['ActionSubmitted', 'PlayersActed']);
    await settled(adventureId);

    const types = await typesOf(adventureId);
    expect(types.filter((type) => type === 'Narrated')).toHaveLength(1);
    const [request] = spec.fake.requestsTo(CHAT);
    const [, user] = request.body.messages as { content: string }[];
    // Each action in submission order, written about its character.
    expect(user.content).toContain('> Ana draws the map.\n\n> Bo holds the lantern.');

    // A retry re-narrates the same actions: both are still in its prompt, neither is dropped.
    await spec.harness.adventures.handle(
      adventureId,
      { type: 'RequestRetry', data: { turnId: randomUUID() } },
      { actor: 'user:owner-1' },
    );
    const retried = await settled(adventureId);
    const [, retryUser] = spec.fake.requestsTo(CHAT)[1].body.messages as { content: string }[];
    expect(retryUser.content).toContain('> Ana draws the map.\n\n> Bo holds the lantern.');
    expect(retried.path.filter((entry) => entry.type === 'do')).toHaveLength(2);
  });

  it('given round with a timeout, when only one player submits, then the timer (a delayed job) closes the round', async () => {
    const adventureId = await room(['ana', 'bo'], { turnPolicy: 'round', roundTimeoutSeconds: 1 });
    await send(adventureId, 'ana', 'I wait by the door');
    const state = await settled(adventureId);
    const types = await typesOf(adventureId);
    const closed = (await readEvents(spec.harness, adventureId)).find(
      (event) => event.type === 'PlayersActed',
    );
    expect((closed?.data as PlayersActed['data']).closedBy).toBe('timer');
    expect(types.filter((type) => type === 'Narrated')).toHaveLength(1);
    expect(state.turns.round.id).toBe('round-2');
  });

  it('given round, when the host closes it, then its submissions are narrated; a player may not', async () => {
    const adventureId = await room(['ana', 'bo'], { turnPolicy: 'round' });
    await send(adventureId, 'ana', 'I knock');
    await expect(
      spec.harness.adventures.handle(
        adventureId,
        { type: 'CloseRound', data: { userId: 'ana' } },
        { actor: 'user:ana' },
      ),
    ).rejects.toThrow(/only the host/);
    await spec.harness.adventures.handle(
      adventureId,
      { type: 'CloseRound', data: { userId: 'owner-1' } },
      { actor: 'user:owner-1' },
    );
    await settled(adventureId);
    expect((await typesOf(adventureId)).filter((type) => type === 'Narrated')).toHaveLength(1);
  });

  it('given a round turn whose job Redis lost, then the reconciler puts it back and it is narrated once', async () => {
    const { harness } = spec;
    const adventureId = await room(['ana'], { turnPolicy: 'round' });
    await send(adventureId, 'ana', 'I climb');
    // The owner's submission closes the round, appended past the handler: no outbox row, as if
    // Redis lost the narrate job.
    const state = await harness.adventures.get(adventureId);
    const actionId = randomUUID();
    const events = decideCommand(
      {
        type: 'SubmitAction',
        data: {
          turnId: randomUUID(),
          inputType: 'do',
          text: 'I follow',
          actionId,
          actorId: 'owner-1',
        },
      },
      state,
    );
    expect(events.map((event) => event.type)).toEqual(['ActionSubmitted', 'PlayersActed']);
    await harness.events.appendToStream(
      adventureStreamId(adventureId),
      events.map((event, i) => ({
        id: eventIdsFor(actionId, events.length)[i],
        type: event.type,
        schemaVersion: EVENT_SCHEMA_VERSIONS[event.type],
        data: event.data,
        metadata: { actor: 'test' },
      })),
      { expectedVersion: state.version, readModels: readModelsOf(events, state) },
    );
    const reconciler = harness.app.get(TurnReconciler);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const report = await reconciler.reconcileOnce();
      const now = await harness.adventures.get(adventureId);
      if (!now.inFlight) break;
      if (Date.now() > deadline) throw new Error(`not put back: ${JSON.stringify(report)}`);
      await sleep(200);
    }
    const types = await typesOf(adventureId);
    expect(types.filter((type) => type === 'Narrated')).toHaveLength(1);
    expect(
      (await harness.adventures.get(adventureId)).path.filter((e) => e.type === 'do'),
    ).toHaveLength(2);
  });
});
