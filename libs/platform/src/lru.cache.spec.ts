import { LruCache } from './lru.cache';

describe('LruCache', () => {
  it('given a full cache, when one more is set, then the least recently used goes', () => {
    const cache = new LruCache<string, number>({ capacity: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recently used
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.size]).toEqual([1, 3, 2]);
  });

  it('given a time to live, when it has passed, then the entry is gone', () => {
    let now = 0;
    const cache = new LruCache<string, string>({ capacity: 10, ttlMs: 100, now: () => now });
    cache.set('k', 'v');
    now = 99;
    expect(cache.get('k')).toBe('v');
    now = 100;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('when entries are deleted by key or by value, then they are gone', () => {
    const cache = new LruCache<string, { id: string }>({ capacity: 10 });
    cache.set('a', { id: '1' });
    cache.set('b', { id: '2' });
    cache.set('c', { id: '1' });
    cache.deleteWhere((value) => value.id === '1');
    cache.delete('b');
    expect(cache.size).toBe(0);
  });

  it('given a weight bound, when the entries outweigh it, then the least recently used go, the newest stays', () => {
    const cache = new LruCache<string, number[]>({
      capacity: 10,
      maxWeight: 5,
      weigh: (value) => value.length,
    });
    cache.set('a', [1, 2]);
    cache.set('b', [1, 2]);
    expect(cache.get('a')).toEqual([1, 2]); // b is now the least recently used
    cache.set('c', [1, 2]);
    expect([cache.get('b'), cache.size, cache.totalWeight]).toEqual([undefined, 2, 4]);
    cache.set('a', [1]); // replacing an entry replaces its weight
    expect(cache.totalWeight).toBe(3);
    cache.set('big', [1, 2, 3, 4, 5, 6]);
    expect([cache.get('big')?.length, cache.size, cache.totalWeight]).toEqual([6, 1, 6]);
    cache.delete('big');
    expect([cache.size, cache.totalWeight]).toEqual([0, 0]);
  });
});
