import { randomUUID } from 'node:crypto';
import { TEST_REDIS_URL } from '@chronicle/testing';
import Redis from 'ioredis';
import { RedisScript } from './redis-script';

// A script runs by its SHA once Redis has it, and by its text the one time it has not.

const redis = new Redis(TEST_REDIS_URL);
afterAll(() => redis.quit());

/** The commands this client sends while `work` runs, by name (MONITOR, filtered to its address). */
async function commandsOf(work: () => Promise<unknown>): Promise<string[]> {
  const me = Number(await redis.client('ID'));
  const list = (await redis.client('LIST')) as string;
  const line = list.split('\n').find((l) => new RegExp(`\\bid=${me}\\b`).test(l))!;
  const address = /\baddr=(\S+)/.exec(line)![1];
  const monitor = await redis.monitor();
  const sent: string[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === address) sent.push(String(args[0]).toLowerCase());
  });
  await work();
  await new Promise((resolve) => setTimeout(resolve, 50));
  monitor.disconnect();
  return sent;
}

describe('RedisScript', () => {
  it('given a script Redis has not seen, when it runs twice, then its text is sent once and the second run goes by SHA', async () => {
    // A body of its own: its SHA is new to this Redis, whatever else ran there.
    const script = new RedisScript(
      `-- ${randomUUID()}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`,
      1,
    );
    const key = `test:redis-script:${randomUUID()}`;
    const answers: unknown[] = [];
    const sent = await commandsOf(async () => {
      answers.push(await script.run(redis, key, 2));
      answers.push(await script.run(redis, key, 3));
    });
    expect(answers).toEqual([2, 5]);
    expect(sent).toEqual(['evalsha', 'eval', 'evalsha']);
    expect(await redis.script('EXISTS', script.sha)).toEqual([1]);
    await redis.del(key);
  });

  it('given a script whose calls must run in the order sent, when it runs, then it is sent whole every time', async () => {
    const script = new RedisScript(`-- ${randomUUID()}\nreturn 1`, 0, { inOrder: true });
    const sent = await commandsOf(async () => {
      await script.run(redis);
      await script.run(redis);
    });
    expect(sent).toEqual(['eval', 'eval']);
  });

  it("given a script that fails, when it runs, then the script's own error is thrown, not retried", async () => {
    const script = new RedisScript(`return redis.error_reply('NOPE ${randomUUID()}')`, 0);
    await script.run(redis).catch(() => undefined); // now cached
    const sent = await commandsOf(() => expect(script.run(redis)).rejects.toThrow(/^NOPE /));
    expect(sent).toEqual(['evalsha']);
  });
});
