// Postgres, the system of record, crashed and kept down while turns run. What must hold: every
// turn that was acknowledged ends (Narrated, or NarrationFailed once Postgres can record it); a
// request while Postgres is down is refused fast with 503 and Retry-After, never a 500 or a hang;
// and the log afterwards passes the history checker.
import { narration } from '../e2e/support/scripted-narrator';
import { FaultSystem } from './support/fault-system';
import {
  expectRefusedInTime,
  frameReached,
  sleep,
  timedAct,
  untilFrames,
  type TimedAnswer,
} from './support/fault-steps';

jest.setTimeout(180_000);

const CHAT = '/v1/chat/completions';
let faults: FaultSystem;

beforeAll(async () => {
  faults = await FaultSystem.start({ apps: ['api', 'context-worker'] });
});

afterAll(async () => {
  try {
    await faults?.checkWholeLog('postgres');
  } finally {
    await faults?.close();
  }
});

it('Postgres restarted in immediate mode mid-turn: the turn narrates once, new turns work at once', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    const slow = narration(9001);
    faults.system.fake.enqueue({ text: slow.text, chunks: 20, delayMs: 150, path: CHAT });
    const accepted = await client.act(adventureId, 'do', 'cross the flats at night');
    expect(accepted.status).toBe(202);

    let restarted: Promise<void> | undefined;
    const stream = await client.follow(accepted.body, {
      timeoutMs: 90_000,
      onFrame: untilFrames('chunk', 3, () => {
        restarted = faults.postgres.restart('immediate');
      }),
    });
    await restarted;
    expect(stream.outcome).toBe('done');

    // the installation takes the next turn without any process restarted
    const next = await client.act(adventureId, 'do', 'make camp by the cairn');
    expect(next.status).toBe(202);
    expect((await client.follow(next.body)).outcome).toBe('done');

    await faults.check(
      'postgres-restart-immediate',
      'Postgres stopped in immediate mode and started again while a turn streamed',
    );
  });
});

it('Postgres down for 15 s: requests get 503 with Retry-After within 3 s, the turn in flight ends, the log holds', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    const other = await faults.newAdventure('The Second Caravan');
    const slow = narration(9002);
    faults.system.fake.enqueue({ text: slow.text, chunks: 10, delayMs: 200, path: CHAT });
    const accepted = await client.act(adventureId, 'do', 'follow the guide into the dark');
    expect(accepted.status).toBe(202);

    const streaming = frameReached('chunk', 2);
    const following = client.follow(accepted.body, {
      timeoutMs: 150_000,
      onFrame: streaming.onFrame,
    });
    await streaming.reached;
    await faults.postgres.stopServer('immediate');
    const downSince = Date.now();

    // requests while it is down: each answered within 3 s, as 503 with Retry-After
    const answers: TimedAnswer[] = [];
    for (let i = 0; i < 5; i++) {
      answers.push(await timedAct(client, other, `shout for help (${i})`));
      await sleep(1_500);
    }
    await sleep(Math.max(0, 15_000 - (Date.now() - downSince)));
    await faults.postgres.startServer();

    // the turn that was running when Postgres went away ends, one way or the other
    const stream = await following;
    expect(['done', 'error']).toContain(stream.outcome);

    // and the installation works again
    const next = await client.act(other, 'do', 'walk on when the dawn comes');
    expect(next.status).toBe(202);
    expect((await client.follow(next.body)).outcome).toBe('done');

    await faults.check(
      'postgres-down-15s',
      'Postgres crashed and kept down for 15 s with a turn streaming and requests arriving',
    );
    // checked last, so a run shows the history check above even where this fails
    expectRefusedInTime(answers);
  });
});

it('Postgres frozen (SIGSTOP) under open connections: 503 with Retry-After within 3 s, then turns resume', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    const other = await faults.newAdventure('The Frozen Ford');
    const slow = narration(9003);
    faults.system.fake.enqueue({ text: slow.text, chunks: 10, delayMs: 200, path: CHAT });
    const accepted = await client.act(adventureId, 'do', 'wade into the ford');
    expect(accepted.status).toBe(202);
    const streaming = frameReached('chunk', 2);
    const following = client.follow(accepted.body, {
      timeoutMs: 150_000,
      onFrame: streaming.onFrame,
    });
    await streaming.reached;
    // the API's pool holds open connections: a read just now left them idle in it
    expect((await client.turn(adventureId, accepted.body.turnId)).status).toBeLessThan(500);

    faults.postgres.freeze();
    const frozenSince = Date.now();
    const answers: TimedAnswer[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        answers.push(await timedAct(client, other, `call across the ice (${i})`));
      }
      await sleep(Math.max(0, 8_000 - (Date.now() - frozenSince)));
    } finally {
      faults.postgres.thaw();
    }

    // the turn that streamed while Postgres froze ends, and the workers take new turns
    const stream = await following;
    expect(['done', 'error']).toContain(stream.outcome);
    const next = await client.act(other, 'do', 'cross once the ice holds');
    expect(next.status).toBe(202);
    expect((await client.follow(next.body)).outcome).toBe('done');

    await faults.check(
      'postgres-frozen',
      'Postgres SIGSTOPped for 8 s (postmaster and backends) with connections open, a turn streaming and requests arriving',
    );
    expectRefusedInTime(answers);
  });
});
