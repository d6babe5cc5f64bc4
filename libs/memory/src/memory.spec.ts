import { type MemoryWrittenData } from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import {
  MEMORY_SYSTEM_PROMPT,
  SUMMARY_SYSTEM_PROMPT,
  buildMatrix,
  castBrief,
  cutOnWord,
  memoryBlocks,
  memoryPrompt,
  rankMemories,
  retrievalQuery,
  summaryPlan,
  summaryPrompt,
  topKByCosine,
} from './index';

function played(turns: number): AdventureHistory {
  const history = AdventureHistory.create();
  for (let turn = 1; turn <= turns; turn++) history.turn('do', `step ${turn}`);
  return history;
}

function writeBlocks(history: AdventureHistory): void {
  for (const block of memoryBlocks(history.state)) {
    const data: MemoryWrittenData = {
      memoryId: `m-${block.anchorActionId}`,
      text: `memory ${block.sourceStart}-${block.sourceEnd}`,
      sourceStart: block.sourceStart,
      sourceEnd: block.sourceEnd,
      anchorActionId: block.anchorActionId,
      sourceActionIds: block.entries.map((entry) => entry.id),
      createdBy: 'worker',
    };
    history.append({ type: 'MemoryWritten', data });
  }
}

describe('memory cadence', () => {
  it('given fewer than 12 story actions, no block is due', () => {
    expect(memoryBlocks(played(5).state)).toEqual([]); // 11 actions
  });

  it('given 12 actions, the first two blocks of 6 are due; then one every 6 actions', () => {
    const history = played(6); // 13 actions: depths 0–12
    expect(memoryBlocks(history.state).map((b) => [b.sourceStart, b.sourceEnd])).toEqual([
      [0, 5],
      [6, 11],
    ]);
    writeBlocks(history);
    history.turn('do', 'step 7'); // 15 actions
    expect(memoryBlocks(history.state)).toEqual([]);
    history.turn('do', 'step 8'); // 17
    expect(memoryBlocks(history.state)).toEqual([]);
    history.turn('do', 'step 9'); // 19: block 12–17 is complete
    expect(memoryBlocks(history.state).map((b) => [b.sourceStart, b.sourceEnd])).toEqual([
      [12, 17],
    ]);
  });

  it('given the next turn in flight, its action waits for its narration (a block never splits a turn)', () => {
    const history = played(8); // 17 actions: depths 0–16
    writeBlocks(history); // 0–5, 6–11
    history.act('do', 'step 9'); // depth 17, the turn in flight
    expect(memoryBlocks(history.state)).toEqual([]); // 12–16 only: five settled actions
    history.narrate(); // 19 actions: block 12–17 holds step 9 and ends before its narration
    expect(memoryBlocks(history.state).map((b) => [b.sourceStart, b.sourceEnd])).toEqual([
      [12, 17],
    ]);
  });

  it('given a failed turn, its action is story again', () => {
    const history = played(8);
    writeBlocks(history);
    history.act('do', 'step 9');
    history.fail();
    expect(memoryBlocks(history.state).map((b) => [b.sourceStart, b.sourceEnd])).toEqual([
      [12, 17],
    ]);
  });

  it('given a long backlog, at most 5 blocks are written per run', () => {
    expect(memoryBlocks(played(30).state)).toHaveLength(5);
  });

  it('when an undo withdraws the last block, that block is due again once the story regrows', () => {
    const history = played(9);
    writeBlocks(history); // 0–5, 6–11, 12–17
    history.undo();
    expect(memoryBlocks(history.state)).toEqual([]); // 12–16 only: five actions
    history.turn('do', 'another step');
    expect(memoryBlocks(history.state).map((b) => [b.sourceStart, b.sourceEnd])).toEqual([
      [12, 17],
    ]);
  });

  it('a summary is due after 15 uncovered actions, from the memories past its cursor', () => {
    const history = played(6); // 13 actions
    writeBlocks(history);
    expect(summaryPlan(history.state)).toBeNull();
    history.turn('do', 'step 7'); // 15
    const plan = summaryPlan(history.state);
    expect(plan).toMatchObject({ sourceStart: 0, sourceEnd: 14, current: null });
    expect(plan?.memories).toEqual(['memory 0-5', 'memory 6-11']);
    expect(plan?.anchorActionId).toBe(history.head);
  });

  describe('with a stable history window', () => {
    function playedIn(historyMode: 'stable' | 'sliding', turns: number): AdventureHistory {
      const history = AdventureHistory.create({
        settings: { historyMode, contextTokenBudget: 256 },
      });
      for (let turn = 1; turn <= turns; turn++) history.turn('do', `step ${turn} of the climb`);
      return history;
    }

    it('is due before 15 actions when the next window would drop an action it does not cover', () => {
      // Given 9 actions and a history that can hold only the newest few
      const history = playedIn('stable', 4);
      // Then the summary is brought up to the tip now
      const plan = summaryPlan(history.state, { historyBudget: 12 });
      expect(plan).toMatchObject({ sourceStart: 0, anchorActionId: history.head });
      // and not when the window still holds everything past the cursor
      expect(summaryPlan(history.state, { historyBudget: 100_000 })).toBeNull();
    });

    it("keeps the seed's cadence for a sliding adventure", () => {
      expect(summaryPlan(playedIn('sliding', 4).state, { historyBudget: 12 })).toBeNull();
    });
  });
});

describe('cast brief', () => {
  const cards = [
    {
      id: 'c1',
      name: 'Mira',
      keys: 'mira, keeper, she',
      entry: 'Mira keeps the light.',
      type: 'character',
    },
    { id: 'c2', name: 'The Lamp', keys: 'lamp', entry: 'A brass lamp.', type: 'item' },
    { id: 'c3', name: 'Harbor', keys: 'harbor', entry: 'A stone harbor.', type: 'location' },
    { id: 'c4', name: 'Tomas', keys: 'tomas', entry: 'A ferryman.', type: 'character' },
    {
      id: 'c5',
      name: 'ASH',
      keys: 'ash',
      entry: 'A duplicate of the protagonist.',
      type: 'character',
    },
  ];

  it('lists the protagonist, then matching cards, then other characters; pronouns match nothing', () => {
    const brief = castBrief({
      persona: { name: 'Ash', pronouns: 'they/them', description: 'A tired courier.' },
      cards,
      plotEssentials: 'The keeper vanished.',
      storyText: 'She lit the lamp at the harbor.',
    });
    expect(brief).toBe(
      [
        'Cast:',
        '- Ash (they/them) — the protagonist. A tired courier.',
        '- The Lamp — A brass lamp.',
        '- Harbor — A stone harbor.',
        '- Mira — Mira keeps the light.',
        '- Tomas — A ferryman.',
        '',
        'Setting:',
        'The keeper vanished.',
      ].join('\n'),
    );
  });

  it('matches imported cards by the lore rule the prompt uses, not the seed comma split', () => {
    const imported = [
      {
        id: 'b',
        name: 'Bob',
        keys: ' Bob ,(Bob ',
        keySyntax: 'aid' as const,
        entry: 'A guard.',
        type: 'npc',
      },
      {
        id: 'r',
        name: 'Ahs',
        keys: '/a{2,3}h/\nsigh',
        keySyntax: 'lines' as const,
        entry: 'Sighs.',
        type: 'x',
      },
      { id: 'o', name: 'Off', keys: 'bobby', enabled: false, entry: 'Never.', type: 'x' },
      { id: 'w', name: 'Cat', keys: 'cat', wholeWords: true, entry: 'A cat.', type: 'x' },
      {
        id: 'i',
        name: 'Inert',
        keys: 'bobby',
        activation: 'inert' as const,
        entry: 'Never.',
        type: 'x',
      },
    ];
    const named = (storyText: string) =>
      castBrief({ persona: null, cards: imported, plotEssentials: '', storyText })
        .split('\n')
        .slice(2)
        .map((line) => line.slice(2).split(' — ')[0]);
    // The seed's split would trim " Bob " to "bob" (Bobby), split the regex on its comma and
    // list the disabled and inert cards.
    expect(named('Bobby said aaah to the category.')).toEqual(['Ahs']);
    expect(named('You see Bob and a cat.')).toEqual(['Bob', 'Cat']);
  });

  it('says "The player" without a persona, caps at 8 entries and cuts entries at 240 chars on a word', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({
      id: `n${i}`,
      name: `Npc${i}`,
      keys: `npc${i}`,
      entry: 'word '.repeat(80),
      type: 'character',
    }));
    const brief = castBrief({ persona: null, cards: many, plotEssentials: '', storyText: '' });
    const lines = brief.split('\n').slice(1);
    expect(lines[0]).toBe('- The player — the protagonist.');
    expect(lines).toHaveLength(8);
    expect(lines[1].length).toBeLessThanOrEqual(2 + 240);
    expect(lines[1].endsWith('word…')).toBe(true);
  });

  it('is empty with no persona, no cards and no plot essentials', () => {
    expect(castBrief({ persona: null, cards: [], plotEssentials: ' ', storyText: 'x' })).toBe('');
  });

  it('keeps the last 300 tokens of the plot essentials as the setting', () => {
    const essentials = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    const brief = castBrief({
      persona: null,
      cards: [],
      plotEssentials: essentials,
      storyText: '',
    });
    expect(brief.startsWith('Setting:\n')).toBe(true);
    expect(brief.endsWith('w399')).toBe(true);
    expect(brief).not.toContain('w0 ');
  });

  it('cutOnWord leaves short text alone', () => {
    expect(cutOnWord('short', 240)).toBe('short');
  });
});

describe('prompts', () => {
  it('the memory prompt is the brief, the excerpt and the cue; with no brief the old form', () => {
    expect(memoryPrompt('Cast:\n- A', 'You ran.')).toEqual({
      system: MEMORY_SYSTEM_PROMPT,
      user: 'Cast:\n- A\n\nStory excerpt:\nYou ran.\n\nMemory:',
    });
    expect(memoryPrompt('', 'You ran.').user).toBe('Story excerpt:\nYou ran.\n\nMemory:');
    expect(MEMORY_SYSTEM_PROMPT).toMatch(/at most 50 words/);
    expect(MEMORY_SYSTEM_PROMPT).toMatch(/third person/);
  });

  it('the summary prompt says "(none yet)" before the first summary', () => {
    expect(summaryPrompt('', '', '- a\n- b').user).toBe(
      'Current story summary:\n(none yet)\n\nNew events since the last update:\n- a\n- b\n\nUpdated summary:',
    );
    expect(SUMMARY_SYSTEM_PROMPT).toMatch(/at most 250 words/);
  });

  it('the retrieval query is the newest 4 actions', () => {
    expect(retrievalQuery(['a', 'b', 'c', 'd', 'e'])).toBe('b\n\nc\n\nd\n\ne');
  });
});

describe('ranking', () => {
  const v = (...xs: number[]) => Float32Array.from(xs);
  const candidates = [
    { id: 'far', text: 'far', pinned: false, vector: v(0, 1) },
    { id: 'near', text: 'near', pinned: false, vector: v(1, 0.1) },
    { id: 'mid', text: 'mid', pinned: false, vector: v(1, 1) },
    { id: 'pin', text: 'pin', pinned: true, vector: v(0, 1) },
    { id: 'raw', text: 'raw', pinned: false, vector: null },
    { id: 'other-model', text: 'x', pinned: false, vector: v(1, 0, 0) },
  ];

  it('ranks by cosine with pinned memories first, counted toward top-K, 4 decimals', () => {
    expect(rankMemories(candidates, v(1, 0), 3)).toEqual([
      { id: 'pin', text: 'pin', similarity: 0, pinned: true },
      { id: 'near', text: 'near', similarity: 0.995, pinned: false },
      { id: 'mid', text: 'mid', similarity: 0.7071, pinned: false },
    ]);
  });

  it('the matrix top-K agrees with the plain ranking', () => {
    const rows = [v(0, 1), v(1, 0.1), v(1, 1)];
    const best = topKByCosine(buildMatrix(rows, 2), v(1, 0), 2);
    expect(best.map(([row]) => row)).toEqual([1, 2]);
  });
});
