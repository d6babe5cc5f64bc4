// Context workers killed, frozen past their lock, stopped, doubled up and running on a wrong
// clock, mid-turn. What must hold: every turn ends with exactly one outcome, and a player's
// screen shows the text of one attempt — the one the log kept.
import { Queue } from 'bullmq';
import { queueKeyPrefix } from '@chronicle/platform';
import { QueueName } from '@chronicle/queue';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { narration } from '../e2e/support/scripted-narrator';
import { FaultSystem } from './support/fault-system';
import { frameReached, sleep, untilFrames } from './support/fault-steps';

jest.setTimeout(180_000);

const CHAT = '/v1/chat/completions';
const LOCK_MS = 2_000;
let faults: FaultSystem;

beforeAll(async () => {
  faults = await FaultSystem.start({
    apps: ['api', 'context-worker'],
    env: { NARRATE_LOCK_MS: String(LOCK_MS) },
  });
});

afterAll(async () => {
  try {
    await faults?.checkWholeLog('workers');
  } finally {
    await faults?.close();
  }
});

/** A slow reply: `chunks` chunks `delayMs` apart. */
function slowReply(take: number, chunks = 20, delayMs = 150) {
  return { text: narration(take).text, chunks, delayMs, path: CHAT };
}

/** Exactly `count` context workers running (extra ones stopped, missing ones started). */
async function contextWorkers(count: number): Promise<void> {
  const running = faults.system.running('context-worker');
  for (const extra of running.slice(count)) await extra.stop();
  for (let i = running.length; i < count; i++) await faults.system.startApp('context-worker');
}

/** libfaketime's preload library, where Debian's `faketime` package puts it; undefined if absent. */
function libfaketime(): string | undefined {
  const dirs = ['/usr/lib/faketime'];
  try {
    // the multiarch directories: /usr/lib/x86_64-linux-gnu/faketime and the like
    for (const entry of readdirSync('/usr/lib')) dirs.push(join('/usr/lib', entry, 'faketime'));
  } catch {
    // no /usr/lib
  }
  return dirs.map((dir) => join(dir, 'libfaketime.so.1')).find((file) => existsSync(file));
}

it('a worker SIGKILLed mid-stream: another takes the turn over, one Narrated, the screen shows one attempt', async () => {
  await faults.explainFailure(async () => {
    await contextWorkers(1);
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    faults.system.fake.enqueue(slowReply(9201, 30, 150));
    const before = faults.system.fake.requestsTo(CHAT).length;
    const accepted = await client.act(adventureId, 'do', 'board the ferry in the storm');
    expect(accepted.status).toBe(202);

    const victim = faults.system.process('context-worker');
    let replacement: Promise<unknown> | undefined;
    const stream = await client.follow(accepted.body, {
      timeoutMs: 120_000,
      onFrame: untilFrames('chunk', 3, () => {
        victim.kill('SIGKILL');
        replacement = victim
          .waitForExit(10_000)
          .then(() => faults.system.startApp('context-worker'));
      }),
    });
    await replacement;
    expect(victim.exit?.signal).toBe('SIGKILL');
    expect(stream.outcome).toBe('done');
    expect(stream.resets).toBeGreaterThanOrEqual(1);
    const requests = faults.system.fake.requestsTo(CHAT).slice(before);
    expect(requests).toHaveLength(2);
    expect(requests[0].aborted).toBe(true);
    await faults.check(
      'worker-sigkill',
      'the context worker SIGKILLed after 3 chunks, a new one started',
    );
  });
});

it('a worker SIGSTOPped past its lock, then continued: its late chunks never reach the screen', async () => {
  await faults.explainFailure(async () => {
    await contextWorkers(1);
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    // the frozen attempt and the one that takes over both stream for seconds, so the frozen
    // worker wakes while the other is mid-stream
    faults.system.fake.enqueue(slowReply(9202, 20, 150), slowReply(9203, 30, 150));
    const accepted = await client.act(adventureId, 'do', 'hold the lantern steady');
    expect(accepted.status).toBe(202);
    const frozen = faults.system.process('context-worker');
    const streaming = frameReached('chunk', 2);
    let resets = 0;
    let thawed = false;
    const following = client.follow(accepted.body, {
      timeoutMs: 120_000,
      onFrame: (frame) => {
        streaming.onFrame(frame);
        if (frame.event === 'reset') resets += 1;
        // the second attempt is streaming: wake the first one
        if (frame.event === 'chunk' && resets > 0 && !thawed) {
          thawed = true;
          frozen.kill('SIGCONT');
        }
      },
    });
    await streaming.reached;
    frozen.kill('SIGSTOP');
    // a second worker, which takes the job over once the frozen one's lock lapses
    await faults.system.startApp('context-worker');
    const stream = await following;
    if (!thawed) frozen.kill('SIGCONT');
    expect(stream.outcome).toBe('done');
    expect(resets).toBeGreaterThanOrEqual(1);
    // the woken worker has finished its stream by now (it either stopped or wrote into the void)
    await sleep(4_000);
    await faults.check(
      'worker-sigstop',
      `the context worker SIGSTOPped mid-stream past its ${LOCK_MS} ms lock, a second worker took over, the first continued (SIGCONT) mid-way through the second's stream`,
    );
  });
});

it('one turn delivered twice under two job ids: one Narrated, the screen shows one attempt', async () => {
  await faults.explainFailure(async () => {
    await contextWorkers(1);
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    faults.system.fake.enqueue(slowReply(9204, 20, 150), slowReply(9205, 20, 150));
    const accepted = await client.act(adventureId, 'do', 'ring for the steward');
    expect(accepted.status).toBe(202);
    const queue = new Queue('narrate', {
      connection: { url: faults.redis.url },
      prefix: queueKeyPrefix(faults.system.queuePrefix, QueueName.Narrate),
    });
    try {
      // a second job for the same turn, as a duplicate delivery would make
      await queue.add(
        'narrate-turn',
        { adventureId, turnId: accepted.body.turnId },
        { jobId: `narrate-${accepted.body.turnId}-again`, attempts: 3 },
      );
    } finally {
      await queue.close();
    }
    const stream = await client.follow(accepted.body, { timeoutMs: 120_000 });
    expect(stream.outcome).toBe('done');
    await sleep(3_000);
    await faults.check(
      'turn-delivered-twice',
      'a second narrate job for a turn in flight, under another job id, run concurrently',
    );
  });
});

it('SIGTERM during a stream: the worker exits cleanly and the turn ends once', async () => {
  await faults.explainFailure(async () => {
    await contextWorkers(1);
    const client = faults.client;
    const adventureId = await faults.newAdventure();
    faults.system.fake.enqueue(slowReply(9206, 20, 150));
    const accepted = await client.act(adventureId, 'do', 'lower the gangplank');
    expect(accepted.status).toBe(202);
    const stopping = faults.system.process('context-worker');
    let stopped: Promise<unknown> | undefined;
    const stream = await client.follow(accepted.body, {
      timeoutMs: 120_000,
      onFrame: untilFrames('chunk', 3, () => {
        stopped = stopping.stop().then(() => faults.system.startApp('context-worker'));
      }),
    });
    await stopped;
    expect(stopping.exit).toEqual({ code: 0, signal: null });
    expect(stream.outcome).toBe('done');
    await faults.check(
      'worker-sigterm',
      'the context worker sent SIGTERM after 3 chunks, a new one started',
    );
  });
});

const FAKETIME = libfaketime();
// Debian's faketime (.ci/run installs it); without it the scenario is skipped and says why.
(FAKETIME ? it : it.skip)(
  `a worker with its clock 10 minutes ahead narrates every turn, none ended as past its deadline${FAKETIME ? '' : ' (skipped: libfaketime is not installed; apt-get install faketime)'}`,
  async () => {
    await faults.explainFailure(async () => {
      await contextWorkers(0);
      await faults.system.startApp('context-worker', {
        LD_PRELOAD: FAKETIME as string,
        FAKETIME: '+10m',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
        NARRATE_TURN_DEADLINE_MS: String(10 * 60_000),
      });
      const client = faults.client;
      const adventureId = await faults.newAdventure();
      for (let i = 0; i < 3; i++) {
        const turn = await client.play(adventureId, 'do', `read the clock (${i})`);
        expect(turn.stream.outcome).toBe('done');
      }
      // and beside a worker on the right clock
      await faults.system.startApp('context-worker');
      const turns = await Promise.all(
        [0, 1, 2, 3].map(async (i) => {
          const id = await faults.newAdventure(`The Clockmaker ${i}`);
          return client.play(id, 'do', 'wind the clock');
        }),
      );
      for (const turn of turns) expect(turn.stream.outcome).toBe('done');
      const report = await faults.check(
        'worker-clock-ahead',
        'one context worker under libfaketime +10 min (alone, then beside a worker on the right clock)',
      );
      expect(report.terminals['NarrationFailed:deadline']).toBeUndefined();
    });
  },
);
