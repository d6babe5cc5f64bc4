import {
  hashedPart,
  queueKeyPrefix,
  redisKeys,
  redisKeySlot,
  TURN_STREAM_SHARDS,
  turnStreamShard,
} from './redis-keys';

// A Redis Cluster refuses a command or script whose keys are in different slots (CROSSSLOT).
// These pin the key names every multi-key operation uses to one slot, computed as the cluster
// computes it (CRC16 of the hash tag); test/e2e/redis-cluster.e2e-spec.ts asks a real cluster.

const installation = 'chronicle';
const slots = (keys: string[]) => new Set(keys.map(redisKeySlot));

describe('redisKeySlot', () => {
  it('is CLUSTER KEYSLOT: CRC16-XMODEM of the hash tag, mod 16384', () => {
    // the cluster spec's check value: CRC16("123456789") = 0x31C3
    expect(redisKeySlot('123456789')).toBe(0x31c3);
    expect(redisKeySlot('foo')).toBe(12182);
    expect(redisKeySlot('bar')).toBe(5061);
    expect(redisKeySlot('{user1000}.following')).toBe(redisKeySlot('{user1000}.followers'));
    expect(redisKeySlot('{user1000}.following')).toBe(redisKeySlot('user1000'));
  });

  it('hashes the first non-empty {…} only, as the cluster does', () => {
    expect(hashedPart('{a}:{b}')).toBe('a');
    expect(hashedPart('{}:x')).toBe('{}:x');
    expect(hashedPart('no-tag')).toBe('no-tag');
    expect(hashedPart('x{unclosed')).toBe('x{unclosed');
  });
});

describe('turn stream keys', () => {
  const turns = Array.from({ length: 200 }, (_, i) => `turn-${i}-${(i * 7919).toString(36)}`);

  it("put a turn's stream, fence and last batch in one slot (the fenced-publish scripts touch all three)", () => {
    for (const turnId of turns) {
      expect(
        slots([
          redisKeys.turnStream(installation, turnId),
          redisKeys.turnFence(installation, turnId),
          redisKeys.turnFenceBatch(installation, turnId),
        ]).size,
      ).toBe(1);
    }
  });

  it('put every stream of one shard in one slot, and spread the shards over slots', () => {
    const byShard = new Map<number, string[]>();
    for (const turnId of turns) {
      const shard = turnStreamShard(turnId);
      byShard.set(shard, [
        ...(byShard.get(shard) ?? []),
        redisKeys.turnStream(installation, turnId),
      ]);
    }
    expect(byShard.size).toBe(TURN_STREAM_SHARDS);
    for (const keys of byShard.values()) expect(slots(keys).size).toBe(1);
    // …and spread the shards over the cluster instead of piling every stream on one node
    expect(slots([...byShard.values()].map((keys) => keys[0])).size).toBe(TURN_STREAM_SHARDS);
  });

  it('would not, without the tag: the old names put a stream and its fence apart', () => {
    const crossSlot = turns.filter(
      (turnId) =>
        slots([`${installation}:turn-stream:${turnId}`, `${installation}:turn-fence:${turnId}`])
          .size > 1,
    );
    expect(crossSlot.length).toBeGreaterThan(turns.length / 2);
  });
});

describe('the reconciler data-loss marker', () => {
  it('lives in the memory queue’s slot, so it is lost with the memory jobs it stands for', () => {
    const marker = redisKeys.reconcilerEpoch(installation, 'memory');
    expect(redisKeySlot(marker)).toBe(
      redisKeySlot(`${queueKeyPrefix(installation, 'memory')}:memory:wait`),
    );
  });
});

describe('the narrate admission keys', () => {
  it("keep a provider key's limits and reservations on one slot (one limiter script touches both)", () => {
    expect(
      slots([
        redisKeys.providerLimits(installation, 'p1'),
        redisKeys.providerReservations(installation, 'p1'),
      ]).size,
    ).toBe(1);
  });

  it("keep a user's leases, line and last-asked times on one slot (one fairness script touches all three)", () => {
    expect(
      slots([
        redisKeys.userLeases(installation, 'u1'),
        redisKeys.userLine(installation, 'u1'),
        redisKeys.userAsked(installation, 'u1'),
      ]).size,
    ).toBe(1);
  });
});
