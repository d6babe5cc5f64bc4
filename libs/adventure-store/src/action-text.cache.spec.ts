import { ActionTextCache } from './action-text.cache';

/** A log of texts by version that counts what it was asked for. */
function fakeLog(texts: Record<string, string>) {
  const asked: string[][] = [];
  return {
    asked,
    readActionTexts: async (
      _adventureId: string,
      entries: readonly { id: string; textVersion: number }[],
    ) => {
      asked.push(entries.map((e) => `${e.textVersion}:${e.id}`));
      return entries.map((e) => texts[`${e.textVersion}:${e.id}`]);
    },
  };
}

describe('ActionTextCache', () => {
  it('given texts read once, when the window moves, then only the unseen rows are read', async () => {
    const log = fakeLog({ '1:a': 'one', '2:b': 'two', '3:c': 'three' });
    const cache = new ActionTextCache(log);

    expect(
      await cache.readActionTexts('adv', [
        { id: 'a', textVersion: 1 },
        { id: 'b', textVersion: 2 },
      ]),
    ).toEqual(['one', 'two']);
    expect(
      await cache.readActionTexts('adv', [
        { id: 'b', textVersion: 2 },
        { id: 'c', textVersion: 3 },
      ]),
    ).toEqual(['two', 'three']);

    expect(log.asked).toEqual([['1:a', '2:b'], ['3:c']]);
  });

  it('given an edited action, when its new version is asked for, then the new text is read', async () => {
    const log = fakeLog({ '1:a': 'before', '4:a': 'after' });
    const cache = new ActionTextCache(log);
    await cache.readActionTexts('adv', [{ id: 'a', textVersion: 1 }]);

    expect(await cache.readActionTexts('adv', [{ id: 'a', textVersion: 4 }])).toEqual(['after']);
  });

  it('given two adventures, when their versions coincide, then each gets its own text', async () => {
    const cache = new ActionTextCache({
      readActionTexts: async (adventureId, entries) => entries.map(() => `text of ${adventureId}`),
    });
    await cache.readActionTexts('x', [{ id: 'a', textVersion: 1 }]);

    expect(await cache.readActionTexts('y', [{ id: 'a', textVersion: 1 }])).toEqual(['text of y']);
  });

  it('given a full cache, when more is read, then the texts unused longest are dropped', async () => {
    const log = fakeLog({ '1:a': 'A', '2:b': 'B', '3:c': 'C' });
    const cache = new ActionTextCache(log, 2);
    await cache.readActionTexts('adv', [{ id: 'a', textVersion: 1 }]);
    await cache.readActionTexts('adv', [{ id: 'b', textVersion: 2 }]);
    await cache.readActionTexts('adv', [{ id: 'a', textVersion: 1 }]); // a is now the newest
    await cache.readActionTexts('adv', [{ id: 'c', textVersion: 3 }]); // evicts b

    expect(
      await cache.readActionTexts('adv', [
        { id: 'a', textVersion: 1 },
        { id: 'b', textVersion: 2 },
      ]),
    ).toEqual(['A', 'B']);
    expect(log.asked).toEqual([['1:a'], ['2:b'], ['3:c'], ['2:b']]);
  });
});
