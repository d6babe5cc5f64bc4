import {
  WINDOW_START,
  isStoryText,
  memoryReader,
  windowCovering,
  windowCoveringSync,
} from './history.window';
import type { WindowAction } from './context.types';

/** A story of `n` actions of `tokens` tokens each (the counts are what the window trusts). */
function uniformStory(n: number, tokens: number): WindowAction[] {
  return Array.from({ length: n }, (_, i) => ({ id: `${i}`, type: 'do', text: `a${i}`, tokens }));
}

function recordingReader(story: WindowAction[]) {
  const read = memoryReader(story);
  const calls: [number, number][] = [];
  return {
    calls,
    readOlder: async (already: number, count: number) => {
      calls.push([already, count]);
      return read(already, count);
    },
  };
}

describe('windowCovering', () => {
  it('stops after the first 32 actions when they already exceed the budget', async () => {
    const { calls, readOlder } = recordingReader(uniformStory(500, 100));
    const window = await windowCovering(readOlder, 1000);
    expect(calls).toEqual([[0, WINDOW_START]]);
    expect(window.map((a) => a.id)).toEqual(Array.from({ length: 32 }, (_, i) => `${468 + i}`));
  });

  it('grows to floor(budget / average × 1.15) + 8, reading only older rows', async () => {
    // Given 8-token actions and a 1,000-token budget: 32 actions hold 256 tokens
    const { calls, readOlder } = recordingReader(uniformStory(500, 8));
    // When the window is read
    const window = await windowCovering(readOlder, 1000);
    // Then the second read asks for floor(1000 / 8 × 1.15) + 8 = 151 minus the 32 already read
    expect(calls).toEqual([
      [0, 32],
      [32, 119],
    ]);
    expect(window).toHaveLength(151);
    expect(window.reduce((s, a) => s + a.tokens, 0)).toBeGreaterThan(1000);
  });

  it('grows by at least 8 when the estimate is smaller', async () => {
    // Actions whose average overstates the rest: 32 newest of 31 tokens, older ones of 1
    const story = [...uniformStory(200, 1), ...uniformStory(32, 31)].map((a, i) => ({
      ...a,
      id: `${i}`,
    }));
    const { calls, readOlder } = recordingReader(story);
    await windowCovering(readOlder, 1000);
    // floor(1000 / 31 × 1.15) + 8 = 45; then the average drops and the window grows again
    expect(calls[1]).toEqual([32, 13]);
    for (let i = 1; i < calls.length; i++) {
      const [already] = calls[i];
      const [prevAlready, prevCount] = calls[i - 1];
      expect(already).toBe(prevAlready + prevCount);
    }
  });

  it('returns the whole story when it runs out first', async () => {
    const { readOlder } = recordingReader(uniformStory(50, 10));
    expect(await windowCovering(readOlder, 100000)).toHaveLength(50);
    expect(await windowCovering(recordingReader([]).readOlder, 100)).toEqual([]);
  });

  it('skips the excluded action and does not count it towards the budget', async () => {
    const story = uniformStory(100, 10);
    story[99] = { ...story[99], tokens: 5000 };
    const window = await windowCovering(recordingReader(story).readOlder, 315, {
      excludeActionId: '99',
    });
    expect(window.map((a) => a.id)).not.toContain('99');
    expect(window.reduce((s, a) => s + a.tokens, 0)).toBeGreaterThan(315);
  });

  it('continues below the prefetched rows', async () => {
    const story = uniformStory(300, 8);
    const { calls, readOlder } = recordingReader(story);
    const first = memoryReader(story)(0, 32);
    const window = await windowCovering(readOlder, 1000, { prefetched: first });
    expect(calls[0][0]).toBe(32);
    expect(window).toEqual(story.slice(-151));
  });

  it('agrees with the synchronous variant', async () => {
    const story = uniformStory(400, 7);
    expect(windowCoveringSync(memoryReader(story), 2000)).toEqual(
      await windowCovering(recordingReader(story).readOlder, 2000),
    );
  });
});

describe('isStoryText', () => {
  it('treats spaces, newlines, CRs and tabs as blank', () => {
    expect(isStoryText(' \n\r\t ')).toBe(false);
    expect(isStoryText('')).toBe(false);
    expect(isStoryText(' x ')).toBe(true);
  });

  it('leaves blank actions out of an in-memory read', () => {
    const story = uniformStory(3, 1);
    story[1] = { ...story[1], text: '\n\t' };
    expect(memoryReader(story)(0, 10).map((a) => a.id)).toEqual(['0', '2']);
  });
});
