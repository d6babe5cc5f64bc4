import { buildContext, RECALL_HEADER } from './context.builder';
import type { ContextInput, RecalledPassage, WindowAction } from './context.types';
import { aContextHead, aStory, storyTokensOf } from './testing';

function passageOf(action: WindowAction, position: number, rank: number): RecalledPassage {
  return {
    actionId: action.id,
    type: action.type,
    text: action.text,
    tokens: action.tokens,
    position,
    lexicalRank: rank,
    vectorRank: null,
    fused: 1 / (60 + rank),
  };
}

describe('recalled passages in the prompt', () => {
  // 400 actions: far more than a 4,096-token budget holds.
  const story = aStory(400);
  const input = (
    overrides: Partial<ContextInput> = {},
    historyMode: 'sliding' | 'stable' = 'sliding',
  ): ContextInput => ({
    ...aContextHead({
      settings: { contextTokenBudget: 4096, historyMode },
      totalActions: story.length,
      storyTokens: storyTokensOf(story),
    }),
    window: story,
    ...overrides,
  });

  it('given no candidate, then the prompt is the history-only prompt, byte for byte', () => {
    const without = buildContext(input());
    const withEmpty = buildContext(input({ passages: { candidates: [] } }));
    expect(withEmpty.system).toBe(without.system);
    expect(withEmpty.story).toBe(without.story);
    expect(withEmpty.report.passages).toEqual({ used: [], inHistory: 0, budget: 0, tokens: 0 });
    expect(without.report.passages).toBeUndefined();
  });

  it('given the summary and memories, when passages are recalled, then the history alone pays for them: the passages keep the budget they have with memory off', () => {
    const old = passageOf(story[10], 10, 1);
    const off = buildContext(input({ passages: { candidates: [old] } }));
    const on = buildContext(
      input({
        passages: { candidates: [old] },
        storySummary: 'The cartographer burned the archive and kept one page. '.repeat(20),
        memories: {
          used: [
            {
              id: 'm1',
              text: 'She hid the page in the lighthouse.',
              similarity: 0.9,
              pinned: false,
            },
          ],
        },
      }),
    );
    expect(on.report.passages?.budget).toBe(off.report.passages?.budget);
    expect(on.report.passages?.used).toEqual(off.report.passages?.used);
    expect(on.report.history.included).toBeLessThan(off.report.history.included);
  });

  it('given candidates the history already holds, then nothing is recalled and the prompt is unchanged', () => {
    const without = buildContext(input());
    const newest = story.slice(-3).map((action, i) => passageOf(action, 397 + i, i + 1));
    const built = buildContext(input({ passages: { candidates: newest } }));
    expect(built.story).toBe(without.story);
    expect(built.report.passages?.used).toEqual([]);
    expect(built.report.passages?.inHistory).toBe(3);
  });

  it('given an old passage, when it is recalled, then its own text is in the prompt, cited with its scores, and the history gives up its share', () => {
    const without = buildContext(input());
    const old = passageOf(story[10], 10, 1);
    const built = buildContext(input({ passages: { candidates: [old] } }));
    expect(built.story).toContain(`${RECALL_HEADER}\n\n${story[10].text}`);
    expect(built.report.passages?.used).toEqual([
      {
        actionId: 'a10',
        type: story[10].type,
        tokens: story[10].tokens,
        position: 10,
        lexicalRank: 1,
        vectorRank: null,
        fused: 1 / 61,
      },
    ]);
    const section = built.report.sections.find((s) => s.label === 'recalled_passages');
    expect(section?.tokens).toBeGreaterThan(story[10].tokens);
    // The history holds fewer actions: the share went to recall.
    expect(built.report.history.included).toBeLessThan(without.report.history.included);
    expect(built.report.passages?.budget).toBeGreaterThan(0);
    expect(built.report.tokens.total).toBeLessThanOrEqual(4096);
  });

  it('given several recalled passages, then they go in story order, and none repeats the history', () => {
    const candidates = [
      passageOf(story[50], 50, 1),
      passageOf(story[5], 5, 2),
      passageOf(story[399], 399, 3),
    ];
    const built = buildContext(input({ passages: { candidates } }));
    const used = built.report.passages!.used.map((p) => p.actionId);
    expect(used).toEqual(['a5', 'a50']);
    const recalled = built.report.sections.find((s) => s.label === 'recalled_passages')!.text;
    expect(recalled.indexOf(story[5].text)).toBeLessThan(recalled.indexOf(story[50].text));
    const history = built.report.sections.find((s) => s.label === 'history')!.text;
    expect(history).not.toContain(story[5].text);
  });

  it('given more candidates than the share holds, then the best fused go in while the share lasts', () => {
    const candidates = story.slice(0, 300).map((action, i) => passageOf(action, i, i + 1));
    const built = buildContext(input({ passages: { candidates } }));
    const report = built.report.passages!;
    expect(report.tokens).toBeLessThanOrEqual(report.budget + 8);
    expect(report.used.length).toBeGreaterThan(1);
  });

  it('given a stable history, then the history gives up the same fixed share whatever was recalled, so its start holds', () => {
    const one = buildContext(
      input({ passages: { candidates: [passageOf(story[10], 10, 1)] } }, 'stable'),
    );
    const two = buildContext(
      input(
        { passages: { candidates: [passageOf(story[10], 10, 1), passageOf(story[20], 20, 2)] } },
        'stable',
      ),
    );
    const historyOf = (built: typeof one) =>
      built.report.sections.find((s) => s.label === 'history')!.text;
    expect(historyOf(one)).toBe(historyOf(two));
  });
});
