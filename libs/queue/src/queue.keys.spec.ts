import { queueKeyPrefix, redisKeySlot } from '@chronicle/platform';
import { QueueKeys } from 'bullmq';
import { ALL_QUEUES, QueueName } from './queue.registry';

// Every BullMQ script touches several of its queue's keys; on a Redis Cluster they must share a
// slot, which the hash-tagged prefix gives them (BullMQ's "Redis Cluster" pattern: a prefix in
// {…}, one per queue so the queues spread over the nodes).

const installation = 'chronicle';

function keysOf(prefix: string, queue: string): string[] {
  const keys = Object.values(new QueueKeys(prefix).getKeys(queue));
  // the per-job keys BullMQ's scripts touch beside them (job hash, its lock, its logs)
  const job = new QueueKeys(prefix).toKey(queue, 'narrate-turn-1');
  return [...keys, job, `${job}:lock`, `${job}:logs`, `${job}:dependencies`];
}

describe("BullMQ's keys", () => {
  it.each(ALL_QUEUES)('of the %s queue all hash to one slot', (queue) => {
    const slots = new Set(keysOf(queueKeyPrefix(installation, queue), queue).map(redisKeySlot));
    expect(slots.size).toBe(1);
  });

  it('of different queues hash to different slots (each queue its own tag)', () => {
    const slots = new Set(
      ALL_QUEUES.map((queue) =>
        redisKeySlot(`${queueKeyPrefix(installation, queue)}:${queue}:wait`),
      ),
    );
    expect(slots.size).toBe(ALL_QUEUES.length);
  });

  it('would not with the untagged prefix: a script over them would be refused (CROSSSLOT)', () => {
    const slots = new Set(keysOf(installation, QueueName.Narrate).map(redisKeySlot));
    expect(slots.size).toBeGreaterThan(1);
  });
});
