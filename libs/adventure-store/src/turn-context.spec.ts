import { createHash } from 'node:crypto';
import { actionTextFromEvent, nodeOf } from '@chronicle/adventure';
import { decodeSnapshot, encodeSnapshot } from './snapshot.codec';
import { AdventureHistory } from '@chronicle/adventure/testing';
import { scriptHookBase } from './script-hook.input';
import {
  buildTurnContext,
  contextManifest,
  DEFAULT_NARRATOR_PROMPT,
  ROOM_NARRATOR_PROMPT,
  storyReader,
  timedLoreOnPath,
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
      reported: [{ type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' }],
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
    history.turn('do', 'wait', { reported: [{ type: 'move', id: 'mira', to: 'harbor' }] });
    const rows = await storyReader(readerOf(history), history.state)(0, 1);
    expect(rows[0]).toMatchObject({
      type: 'ai',
      rejections: [expect.objectContaining({ line: '{"type":"move","id":"mira","to":"harbor"}' })],
    });
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

describe('timed lore (sticky, cooldown) from the path', () => {
  /** A turn as the worker plays it: the prompt built from the log, its manifest recorded. */
  async function playTurn(history: AdventureHistory, text: string) {
    if (!history.state.inFlight) history.act('do', text);
    const built = await buildTurnContext(readerOf(history), history.state, options);
    history.narrate({ text: 'The wind turns.', manifest: contextManifest(built) });
    return built.report;
  }
  const reasonOf = (report: Awaited<ReturnType<typeof playTurn>>) =>
    report.cards.find((c) => c.name === 'Storm')?.reason ??
    report.cardsNotFired?.find((m) => m.name === 'Storm')?.reason ??
    (report.cards.some((c) => c.name === 'Storm') ? 'key' : 'none');

  it('given a sticky card that fired, when later turns omit its key, then it stays for its actions, cools down, and fires again', async () => {
    const history = AdventureHistory.create({
      storyCards: [
        {
          id: 'card-storm',
          name: 'Storm',
          keys: 'storm',
          entry: 'A storm is coming.',
          timing: { sticky: 4, cooldown: 2 },
        },
      ],
    });
    const first = await playTurn(history, 'I smell a storm');
    expect(reasonOf(first)).toBe('key');
    expect(first.timedLore).toEqual(['card-storm']);
    // The AI node keeps it, and a snapshot keeps the node's.
    const node = nodeOf(history.state, history.head)!;
    expect(node.timedLore).toEqual(['card-storm']);
    expect(nodeOf(decodeSnapshot(encodeSnapshot(history.state))!, node.id)?.timedLore).toEqual([
      'card-storm',
    ]);
    // Each turn adds two actions: 2 and 4 past the firing it stays, 6 it cools down, 8 it fires.
    const reasons = [];
    for (let i = 0; i < 4; i++) reasons.push(reasonOf(await playTurn(history, 'I say storm')));
    expect(reasons).toEqual(['sticky', 'sticky', 'cooldown', 'key']);
  });

  it('given a retry, when its prompt is built, then the replaced take does not count; an undo past the firing forgets it', async () => {
    const history = AdventureHistory.create({
      storyCards: [
        { id: 'card-storm', name: 'Storm', keys: 'storm', entry: 'x', timing: { cooldown: 10 } },
      ],
    });
    await playTurn(history, 'calm');
    const fired = await playTurn(history, 'a storm');
    expect(fired.timedLore).toEqual(['card-storm']);
    // Retrying the take that fired it: the new take's prompt fires it again, not cooling down.
    history.requestRetry();
    const retried = await playTurn(history, '');
    expect(reasonOf(retried)).toBe('key');
    // Counted from where the next narration would go (a continue: one action on).
    expect(timedLoreOnPath(history.state)).toEqual([{ cardId: 'card-storm', ago: 1 }]);
    const cooling = await playTurn(history, 'storm again');
    expect(reasonOf(cooling)).toBe('cooldown');
    // Undo back before the firing (a turn per undo): the path no longer holds it.
    history.undo().undo();
    expect(timedLoreOnPath(history.state)).toEqual([]);
  });

  it('given a book without timers, when the head is built, then no path is walked', () => {
    const history = AdventureHistory.create();
    history.act('do', 'look');
    expect(turnContextHead(history.state, options).timedLore).toBeUndefined();
  });
});

// docs/multiplayer.md §3.2, §3.6: a room's prompt and scripts name every active player's
// character; a one-player adventure's stay as they were.
describe('a room in the turn context and the script hooks', () => {
  const mira = { name: 'Mira', pronouns: 'she/her', description: 'A smith.' };
  const script = {
    id: 'script-1',
    name: 'watch',
    library: '',
    input: 'modifier(text)',
    context: '',
    output: '',
    enabled: true,
    version: 1,
  };
  function played(players: boolean) {
    const history = AdventureHistory.create();
    history.act('do', 'look at the lamp');
    const { state } = history;
    const members = [
      { userId: 'owner-1', role: 'host' as const, character: null, status: 'active' as const },
      ...(players
        ? [
            {
              userId: 'u-mira',
              role: 'player' as const,
              character: mira,
              status: 'active' as const,
            },
          ]
        : []),
    ];
    return {
      history,
      state: { ...state, scripts: [script], room: { members, invites: [], banned: [] } },
    };
  }

  it('given a room of the host (persona Ash) and Mira, when the head is built, then it lists both and the room narrator prompt', () => {
    const { state } = played(true);
    const head = turnContextHead(state, options);
    expect(head.players?.map((p) => p.name)).toEqual(['Ash', 'Mira']);
    expect(head.settings.narratorPrompt).toBe(ROOM_NARRATOR_PROMPT);
  });

  it('given one player, when the head is built, then no players and the narrator prompt of before', () => {
    const { state } = played(false);
    const head = turnContextHead(state, options);
    expect(head).not.toHaveProperty('players');
    expect(head.settings.narratorPrompt).toBe(DEFAULT_NARRATOR_PROMPT);
  });

  it("given a room, when the script hooks are prepared, then info.characters and characterNames are the room's; one player keeps the persona alone", async () => {
    const room = played(true);
    const base = await scriptHookBase(readerOf(room.history), room.state);
    expect(base?.characters).toEqual([{ name: 'Ash' }, { name: 'Mira' }]);
    expect(base?.characterNames).toEqual(['Ash', 'Mira']);
    const alone = played(false);
    const single = await scriptHookBase(readerOf(alone.history), alone.state);
    expect(single).not.toHaveProperty('characters');
    expect(single?.characterNames).toEqual(['Ash']);
  });
});
