import { createHash } from 'node:crypto';
import { actionTextFromEvent } from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import {
  buildTurnContext,
  contextManifest,
  DEFAULT_NARRATOR_PROMPT,
  storyReader,
  turnContextHead,
  type ActionTextReader,
} from './turn-context';

/** The repository's text read, over an in-memory history: same contract, no database. */
function readerOf(history: AdventureHistory): ActionTextReader & { reads: number[][] } {
  const reads: number[][] = [];
  return {
    reads,
    readActionTexts: async (_id, entries) => {
      reads.push(entries.map((entry) => entry.textVersion));
      return entries.map((entry) => {
        const event = history.events.find((e) => e.version === entry.textVersion);
        const text = event ? actionTextFromEvent(event, entry.id) : null;
        if (text === null) throw new Error(`no text for ${entry.id}`);
        return text;
      });
    },
  };
}

const options = { defaultModel: 'default-model' };

describe('turnContextHead', () => {
  it('given an adventure with no model, when the head is built, then the default model and narrator prompt are used', () => {
    const history = AdventureHistory.create({ settings: { temperature: 0.3 } });
    history.act('do', 'look at the lamp');

    const head = turnContextHead(history.state, options);

    expect(head.settings).toMatchObject({
      model: 'default-model',
      narratorPrompt: DEFAULT_NARRATOR_PROMPT,
      temperature: 0.3,
      apiMode: 'chat',
    });
    expect(head.storyCards).toEqual([
      {
        id: 'card-mira',
        name: 'Mira',
        keys: 'mira, keeper',
        entry: 'Mira keeps the light.',
        type: expect.any(String),
      },
    ]);
    // The prompt's view of the cards (no notes), the same objects on the next build of the same
    // projection, so the lore matcher knows an unchanged book by them.
    expect(head.storyCards[0]).not.toHaveProperty('notes');
    expect(turnContextHead(history.state, { defaultModel: 'default-model' }).storyCards).toBe(
      head.storyCards,
    );
    expect(head.totalActions).toBe(2);
    expect(head.memories).toBeNull();
    expect(head.excludeActionId).toBeNull();
  });

  it('given a retry in flight, when the head is built, then the replaced take is excluded and the state is the one before it', () => {
    const history = AdventureHistory.create();
    history.turn('do', 'light the lamp', {
      accepted: [{ type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' }],
    });
    const replaced = history.head;
    history.requestRetry();

    const head = turnContextHead(history.state, options);

    expect(head.excludeActionId).toBe(replaced);
    expect(head.narrativeState).toBe(history.state.narrativeAtParent);
    expect(head.totalActions).toBe(2);
  });
});

describe('storyReader', () => {
  it('reads the newest rows first and only the texts asked for', async () => {
    const history = AdventureHistory.create();
    for (let i = 0; i < 5; i++) history.turn('do', `step ${i}`, { text: `Narration ${i}.` });
    const store = readerOf(history);
    const read = storyReader(store, history.state);

    const newest = await read(0, 2);
    const older = await read(2, 3);

    expect(newest.map((a) => a.text)).toEqual(['> You step 4.', 'Narration 4.']);
    expect(older.map((a) => a.text)).toEqual(['Narration 2.', '> You step 3.', 'Narration 3.']);
    expect(store.reads).toEqual([expect.any(Array), expect.any(Array)]);
    expect(store.reads.flat()).toHaveLength(5);
  });

  it("attaches an AI turn's rejections so the next prompt can carry them", async () => {
    const history = AdventureHistory.create();
    const rejection = { line: '{"type":"leave"}', reason: 'unknown id', fix: 'Use a known id.' };
    history.turn('do', 'wait', { rejected: [rejection] });
    const rows = await storyReader(readerOf(history), history.state)(0, 1);
    expect(rows[0]).toMatchObject({ type: 'ai', rejections: [rejection] });
  });
});

describe('buildTurnContext and contextManifest', () => {
  it('builds the prompt from the log and keeps only hashes of its texts in the manifest', async () => {
    const history = AdventureHistory.create();
    history.turn('do', 'climb the stairs', { text: 'The stairs wind up into the dark.' });
    history.act('say', 'Mira?');

    const built = await buildTurnContext(readerOf(history), history.state, options);
    const manifest = contextManifest(built);

    expect(built.system.startsWith(DEFAULT_NARRATOR_PROMPT)).toBe(true);
    expect(built.story).toContain('The stairs wind up into the dark.');
    expect(built.story.indexOf('> You climb the stairs.')).toBeLessThan(
      built.story.indexOf('> You say "Mira?"'),
    );
    expect(JSON.stringify(manifest)).not.toContain('The stairs wind up');
    expect(manifest.sha256.story).toBe(createHash('sha256').update(built.story).digest('hex'));
    expect(manifest.sections.map((s) => s.label)).toEqual(
      built.report.sections.map((s) => s.label),
    );
    expect(manifest.history).toEqual({ included: 4, total: 4, oldest_truncated: false });
  });
});
