// Many clients at once, against one API and one worker: races for one adventure, one action id
// resent in a burst, and a soak of adventures with random conflicts. What must hold: one turn
// in flight per adventure (the others answered 409, and absent from the log), one turn per
// action id however often it is sent, and the history checker's counts with nothing lost and
// nothing doubled.
import { randomUUID } from 'node:crypto';
import { createUserKey, E2E_ADMIN_API_KEY } from '@chronicle/testing';
import { seededRandom } from '../../libs/context/src/testing';
import { narration } from '../e2e/support/scripted-narrator';
import { FaultSystem } from './support/fault-system';
import { RecordingClient } from './support/recording.client';

jest.setTimeout(180_000);

let faults: FaultSystem;

beforeAll(async () => {
  faults = await FaultSystem.start({
    apps: ['api', 'context-worker'],
    // the soak's 16 clients share two keys and may all be watching a turn at once, while the
    // one worker's backlog holds each stream open; the per-key cap (10 by default, tested in
    // streams.int-spec) is not what this suite is about
    env: { SSE_MAX_PER_KEY: '16' },
  });
});

afterAll(async () => {
  try {
    await faults?.checkWholeLog('concurrency');
  } finally {
    await faults?.close();
  }
});

it('20 clients racing one adventure, five rounds: one 202 a round, 409 for the rest, nothing of theirs written', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    for (let round = 0; round < 5; round++) {
      // the winner's turn stays in flight (the model holds its answer) longer than the race takes
      faults.system.fake.enqueue({
        text: narration(9400 + round).text,
        hangMs: 1_500,
        chunks: 4,
        path: '/v1/chat/completions',
      });
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          client.act(adventureId, 'do', `round ${round}: client ${i} grabs the rope`),
        ),
      );
      const accepted = answers.filter((a) => a.status === 202);
      expect(accepted).toHaveLength(1);
      expect(answers.filter((a) => a.status === 409)).toHaveLength(19);
      expect((await client.follow(accepted[0].body)).outcome).toBe('done');
    }
    const report = await faults.check(
      'race-one-adventure',
      '20 clients POSTing an action to one adventure at the same instant, 5 rounds',
    );
    expect(report).toMatchObject({ acknowledged: 5, foundOnce: 5, refused: 95, refusedWritten: 0 });
  });
});

it('one action id sent 50 times at once: one turn, and every answer names it', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    const id = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => client.act(adventureId, 'do', 'knock three times', id)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(202));
    expect(new Set(answers.map((a) => a.body.turnId)).size).toBe(1);
    expect((await client.follow(answers[0].body)).outcome).toBe('done');
    const report = await faults.check('resend-50', 'one action id POSTed 50 times concurrently');
    expect(report).toMatchObject({ acknowledged: 1, foundOnce: 1, duplicated: 0 });
  });
});

it('200 adventures with random conflicts for 30 s: nothing acknowledged lost or doubled', async () => {
  await faults.explainFailure(async () => {
    // an account holds at most 100 adventures: two players of their own
    const ledger = faults.client.ledger;
    const players: RecordingClient[] = [];
    for (const name of ['soak-player-1', 'soak-player-2']) {
      const { key } = await createUserKey(faults.system.apiUrl, E2E_ADMIN_API_KEY, { name });
      players.push(
        new RecordingClient(faults.system.apiUrl, ledger, { authorization: `Bearer ${key}` }),
      );
    }
    const adventures: Array<{ id: string; client: RecordingClient; lastId?: string }> = [];
    for (let i = 0; i < 200; i++) {
      const client = players[i % 2];
      adventures.push({ id: await faults.newAdventure(`Soak ${i}`, client), client });
    }

    const random = seededRandom(13);
    const until = Date.now() + 30_000;
    const MAX_REQUESTS = 5_000;
    let requests = 0;
    const loop = async () => {
      while (Date.now() < until && requests < MAX_REQUESTS) {
        const adventure = adventures[Math.floor(random() * adventures.length)];
        const roll = random();
        requests += 1;
        if (roll < 0.15 && adventure.lastId) {
          // a resend of the adventure's last action, as sent (the same id with another body is
          // a 422, not a resend)
          await adventure.client.act(adventure.id, 'do', 'walk on', adventure.lastId);
        } else if (roll < 0.35) {
          // two actions on one adventure at once: at most one may win
          requests += 1;
          await Promise.all([
            adventure.client.act(adventure.id, 'do', 'push left'),
            adventure.client.act(adventure.id, 'say', 'push right'),
          ]);
        } else {
          const id = randomUUID();
          const answer = await adventure.client.act(adventure.id, 'do', 'walk on', id);
          if (answer.status === 202) {
            adventure.lastId = id;
            // one turn in ten is watched to its end, as a player's screen would
            if (roll > 0.9) await adventure.client.follow(answer.body, { timeoutMs: 90_000 });
          }
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, loop));

    const report = await faults.check(
      'soak-200-adventures',
      '200 adventures, 16 concurrent clients for 30 s: random actions, concurrent pairs, resends',
      { settleTimeoutMs: 90_000 },
    );
    expect(report.acknowledged).toBeGreaterThan(50);
    expect(report).toMatchObject({ lost: 0, duplicated: 0, refusedWritten: 0 });
    // every request was answered, and none with a 5xx (a 409 or a limit's 429 is a refusal)
    for (const status of Object.keys(report.statuses).map(Number)) {
      expect(status > 0 && status < 500).toBe(true);
    }
  });
});
