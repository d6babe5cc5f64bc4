import { buildContext } from './context.builder';
import { memoryTokenBudget, summaryTokenBudget } from './memory.budget';
import { aContextHead, aStory, someMemories } from './testing/context.factory';
import { tokenizer } from './tokenizer';

// Given the memory settings' sections, when a prompt is built, then the summary with its
// chapters and the memories each keep to their share of the budget.

const tok = tokenizer('cl100k_base');

function sectionOf(built: ReturnType<typeof buildContext>, label: string) {
  return built.report.sections.find((section) => section.label === label);
}

function chapters(count: number, words = 60) {
  return Array.from({ length: count }, (_, i) => ({
    text: `Chapter ${i}: ${'Mira walked the causeway and counted the lamps. '.repeat(words / 8)}`,
    sourceStart: i * 10,
    sourceEnd: i * 10 + 9,
  }));
}

describe('memory sections within their budget', () => {
  it('given no chapters, when built, then the summary section is the summary alone (as before chapters)', () => {
    const built = buildContext({
      ...aContextHead({ storySummary: 'Mira kept the light.' }),
      window: aStory(4),
    });
    expect(sectionOf(built, 'story_summary')?.text).toBe('Story summary:\nMira kept the light.');
  });

  it('given more chapters than fit, when built, then the summary and the newest chapters that fit are sent, in story order', () => {
    const all = chapters(20);
    const built = buildContext({
      ...aContextHead({
        storySummary: 'Mira kept the light.',
        storyChapters: all,
        settings: { contextTokenBudget: 8192 },
      }),
      window: aStory(4),
    });
    const text = sectionOf(built, 'story_summary')!.text;
    expect(text.startsWith('Story summary:\nMira kept the light.\n\n')).toBe(true);
    expect(text).toContain('Chapter 19:');
    expect(text).not.toContain('Chapter 0:');
    const sent = all.filter((chapter) => text.includes(chapter.text.trim()));
    expect(sent.map((c) => c.sourceStart)).toEqual(
      all.slice(all.length - sent.length).map((c) => c.sourceStart),
    );
    expect(tok.count(text)).toBeLessThanOrEqual(summaryTokenBudget(8192) + 10);
  });

  it('given memories over their share, when built, then the best that fit are sent and reported, the pinned first', () => {
    const texts = Array.from(
      { length: 30 },
      (_, i) => `Memory ${i}: the keeper hid the ledger under the ${i}th stair of the tower.`,
    );
    const built = buildContext({
      ...aContextHead({ memories: someMemories(texts), settings: { contextTokenBudget: 4096 } }),
      window: aStory(4),
    });
    const used = built.report.memories!.used;
    expect(used.length).toBeGreaterThan(0);
    expect(used.length).toBeLessThan(texts.length);
    expect(used[0].id).toBe('m0');
    expect(tok.count(sectionOf(built, 'used_memories')!.text)).toBeLessThanOrEqual(
      memoryTokenBudget(4096) + 10,
    );
  });
});
