// Redis, the transport (queues, turn streams, rate limits, the control plane), restarted with
// and without its data, stopped, and filled up. Postgres holds the truth: whatever Redis loses
// is rebuilt from the log, a request that cannot reach Redis is refused fast with 503, and the
// log afterwards passes the history checker.
import { narration } from '../e2e/support/scripted-narrator';
import { FaultSystem } from './support/fault-system';
import {
  eventually,
  expectRefusedInTime,
  frameReached,
  sleep,
  timedAct,
  type TimedAnswer,
} from './support/fault-steps';

jest.setTimeout(180_000);

const CHAT = '/v1/chat/completions';
let faults: FaultSystem;

beforeAll(async () => {
  faults = await FaultSystem.start({
    apps: ['api', 'context-worker'],
    redis: { appendOnly: true },
    // one turn at a time, so a second turn waits in the queue while the first runs
    env: { NARRATE_CONCURRENCY: '1' },
  });
});

afterAll(async () => {
  try {
    await faults?.checkWholeLog('redis');
  } finally {
    await faults?.close();
  }
});

async function health(): Promise<{ status: number; body: string }> {
  const response = await fetch(`${faults.system.apiUrl}/health`, {
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, body: await response.text() };
}

it('Redis restarted with AOF while a turn streams: the turn ends once, turns are accepted again within seconds', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    const slow = narration(9101);
    faults.system.fake.enqueue({ text: slow.text, chunks: 20, delayMs: 150, path: CHAT });
    const accepted = await client.act(adventureId, 'do', 'read the ledger by lamplight');
    expect(accepted.status).toBe(202);
    const streaming = frameReached('chunk', 2);
    const following = client.follow(accepted.body, {
      timeoutMs: 120_000,
      onFrame: streaming.onFrame,
    });
    await streaming.reached;
    await faults.redis.restart({ how: 'graceful' });
    expect(['done', 'error']).toContain((await following).outcome);

    // no process restarted: the next turn is accepted and narrated within seconds
    const next = await eventually(
      'a turn accepted after the Redis restart',
      async () => {
        const result = await client.act(adventureId, 'do', 'close the ledger');
        return result.status === 202 ? result : undefined;
      },
      10_000,
    );
    expect((await client.follow(next.body)).outcome).toBe('done');
    await faults.check(
      'redis-restart-aof',
      'Redis stopped (SIGTERM) and started on its AOF while a turn streamed',
    );
  });
});

it('Redis restarted empty with one turn running and one waiting: both end, and both adventures take new actions', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const first = await faults.newAdventure('The Running Turn');
    const second = await faults.newAdventure('The Waiting Turn');
    faults.system.fake.enqueue({
      text: narration(9102).text,
      chunks: 20,
      delayMs: 200,
      path: CHAT,
    });
    const running = await client.act(first, 'do', 'count the coins');
    expect(running.status).toBe(202);
    const streaming = frameReached('chunk', 2);
    const runningStream = client.follow(running.body, {
      timeoutMs: 120_000,
      onFrame: streaming.onFrame,
    });
    await streaming.reached;
    // the only slot is busy: this one waits in the queue
    const waiting = await client.act(second, 'do', 'wait by the door');
    expect(waiting.status).toBe(202);

    // everything Redis held is gone: the jobs, the turn streams, the rate-limit counters
    await faults.redis.restart({ how: 'kill', appendOnly: false });

    const outcomes = await Promise.all([
      runningStream,
      client.follow(waiting.body, { timeoutMs: 120_000 }),
    ]);
    for (const stream of outcomes) expect(['done', 'error']).toContain(stream.outcome);

    for (const adventureId of [first, second]) {
      const next = await client.act(adventureId, 'do', 'carry on');
      expect(next.status).toBe(202);
      expect((await client.follow(next.body)).outcome).toBe('done');
    }
    await faults.check(
      'redis-restart-empty',
      'Redis killed and started without persistence (all keys lost) with one turn running and one waiting',
    );
  });
});

it('Redis unreachable at the API: requests get 503 with Retry-After within 3 s; turns work once it is back', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    await faults.redis.stopServer('graceful');
    const answers: TimedAnswer[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        answers.push(await timedAct(client, adventureId, `ring the bell (${i})`));
      }
      const down = await health();
      expect(down.status).toBe(503);
    } finally {
      await faults.redis.startServer();
    }
    const next = await eventually(
      'a turn accepted once Redis is back',
      async () => {
        const result = await client.act(adventureId, 'do', 'ring the bell again');
        return result.status === 202 ? result : undefined;
      },
      10_000,
    );
    expect((await client.follow(next.body)).outcome).toBe('done');
    await faults.check('redis-unreachable', 'Redis stopped while the API took requests');
    // checked last, so a run shows the history check above even where this fails
    expectRefusedInTime(answers);
  });
});

it('Redis frozen (SIGSTOP, sockets open, no answers): requests get 503 within 3 s; everything resumes on SIGCONT', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    const answers: Array<{ status: number; ms: number }> = [];
    faults.redis.freeze();
    try {
      for (let i = 0; i < 2; i++) {
        const started = Date.now();
        const result = await client.act(adventureId, 'do', `listen at the door (${i})`);
        answers.push({ status: result.status, ms: Date.now() - started });
      }
    } finally {
      faults.redis.thaw();
    }
    const next = await eventually(
      'a turn accepted once Redis answers again',
      async () => {
        const result = await client.act(adventureId, 'do', 'open the door');
        return result.status === 202 ? result : undefined;
      },
      15_000,
    );
    expect((await client.follow(next.body)).outcome).toBe('done');
    await faults.check(
      'redis-frozen',
      'Redis SIGSTOPped (a hung host) while the API took requests, then SIGCONT',
    );
    // checked last, so a run shows the history check above even where this fails
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.ms).toBeLessThan(3_000);
    }
  });
});

it('Redis full under noeviction, then freed: writes are refused with 503 meanwhile, nothing acknowledged is lost', async () => {
  await faults.explainFailure(async () => {
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    // one adventure per request made while Redis is full, so no answer is a 409 for a turn in flight
    const others: string[] = [];
    for (let i = 0; i < 4; i++) others.push(await faults.newAdventure(`The Full House ${i}`));
    faults.system.fake.enqueue({
      text: narration(9103).text,
      chunks: 20,
      delayMs: 150,
      path: CHAT,
    });
    const accepted = await client.act(adventureId, 'do', 'stack the crates');
    expect(accepted.status).toBe(202);
    const streaming = frameReached('chunk', 2);
    const following = client.follow(accepted.body, {
      timeoutMs: 120_000,
      onFrame: streaming.onFrame,
    });
    await streaming.reached;

    const answers: number[] = [];
    await faults.redis.fill();
    try {
      for (let i = 0; i < 3; i++) {
        answers.push((await client.act(others[i], 'do', `push the door (${i})`)).status);
        await sleep(500);
      }
    } finally {
      await faults.redis.free();
    }
    expect(['done', 'error']).toContain((await following).outcome);
    const next = await eventually(
      'a turn accepted once Redis has room',
      async () => {
        const result = await client.act(others[3], 'do', 'push the door once more');
        return result.status === 202 ? result : undefined;
      },
      10_000,
    );
    expect((await client.follow(next.body)).outcome).toBe('done');
    await faults.check(
      'redis-full',
      'Redis filled to its maxmemory under noeviction (every write refused with OOM) for ~2 s, then freed',
    );
    // 202 (the write fitted) or 503; never a 500
    for (const status of answers) expect([202, 503]).toContain(status);
  });
});

it('a Redis not on noeviction: /health answers 503 naming the policy until it is set back', async () => {
  await faults.explainFailure(async () => {
    expect((await health()).status).toBe(200);
    await faults.redis.command((redis) => redis.config('SET', 'maxmemory-policy', 'allkeys-lru'));
    try {
      const wrong = await eventually(
        '/health refusing allkeys-lru',
        async () => {
          const answer = await health();
          return answer.status === 503 ? answer : undefined;
        },
        10_000,
      );
      expect(wrong.body).toContain('noeviction');
    } finally {
      await faults.redis.command((redis) => redis.config('SET', 'maxmemory-policy', 'noeviction'));
    }
    await eventually('/health back to 200', async () => (await health()).status === 200, 10_000);
  });
});
