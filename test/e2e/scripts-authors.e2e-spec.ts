// Real community scripts, as their authors expect them to behave (issue 27). Each fixture is
// written here in the shape of the published script it stands for (its hooks, the globals it
// reads and writes, what it returns), not copied from it. What is asserted is what the log
// holds and what the player is shown.
import { AppSystem } from '@chronicle/testing';
import { ChronicleClient, ofType } from './support/chronicle.client';

jest.setTimeout(180_000);

const REPLY = 'The dragon circles the tower twice.';
let system: AppSystem;
let client: ChronicleClient;

beforeAll(async () => {
  system = await AppSystem.start({ apps: ['api', 'context-worker'], fake: { instant: true } });
  system.fake.setDefaultReply(() => ({ text: REPLY }));
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
});

const scenario = (scripts: Record<string, unknown>[]) => ({
  title: 'The Tower',
  opening: 'You stand below the wizard tower.',
  scripts,
});

/**
 * Hashtag-DnD's shape: onInput reads a `#command` and notes it in `state`; onOutput answers the command in place of the model's reply: `#help`
 * replaces it with a long help page, `#roll` puts the roll in `state.message` and returns " "
 * so the reply is hidden.
 */
function hashtagDnd(helpChars: number) {
  return {
    name: 'Hashtag DnD',
    library: `
      function helpPage() {
        const line = "#roll (dice): rolls the dice and reports the result to you.\\n";
        let page = "";
        while (page.length < ${helpChars}) page += line;
        return page.slice(0, ${helpChars});
      }`,
    input: `
      const modifier = (text) => {
        const command = text.match(/#(\\w+)/);
        state.show = command ? command[1] : null;
        return { text };
      };
      modifier(text)`,
    output: `
      const modifier = (text) => {
        if (state.show === "help") { state.show = null; return { text: helpPage() }; }
        if (state.show === "roll") {
          state.show = null;
          state.message = "You rolled a 17.";
          return { text: " " };
        }
        return { text };
      };
      modifier(text)`,
  };
}

const narrations = async (id: string) =>
  ofType(await client.events(id), 'Narrated').map((e) => e.data.action.text as string);
const shown = (played: Awaited<ReturnType<ChronicleClient['play']>>) =>
  (played.stream.final as { action: { text: string } }).action.text;

describe('item 1: a long text from an Output hook', () => {
  it("given Hashtag-DnD's 21 KB #help page, when the player asks for it, then the turn ends with the page stored and shown, not an internal error", async () => {
    const id = await client.createAdventure(scenario([hashtagDnd(21_000)]));
    const played = await client.play(id, 'do', '#help');
    expect(played.stream.outcome).toBe('done');
    expect(shown(played)).toHaveLength(21_000);
    expect((await narrations(id))[0]).toHaveLength(21_000);
    expect(ofType(await client.events(id), 'NarrationFailed')).toEqual([]);
  });

  it('given an Output hook returning more than 50,000 characters, then that run is a named script failure and the model text is kept', async () => {
    const id = await client.createAdventure(scenario([hashtagDnd(50_001)]));
    const played = await client.play(id, 'do', '#help');
    expect(played.stream.outcome).toBe('done');
    expect(shown(played)).toBe(REPLY);
    const events = await client.events(id);
    expect(ofType(events, 'NarrationFailed')).toEqual([]);
    const output = ofType(events, 'ScriptHookRan').find((e) => e.data.hook === 'output')!;
    expect(output.data).toMatchObject({
      outcome: 'invalid',
      error: 'Hashtag DnD (output): the output hook returned more than 50000 characters',
    });
    const notices = played.stream.frames.filter((f) => f.event === 'notice');
    expect(notices.map((f) => (f.data as { text: string }).text)).toEqual([
      'The script "Hashtag DnD" failed in its output hook (it returned something Chronicle cannot use); the turn went on without it.',
    ]);
  });
});

describe('item 4: a blank output (AI Dungeon: whitespace is shown, "" is a failed script)', () => {
  it('given Hashtag-DnD returning " " on a #roll turn, then " " is the narration and the roll is the message', async () => {
    const id = await client.createAdventure(scenario([hashtagDnd(100)]));
    const played = await client.play(id, 'do', '#roll d20');
    expect(played.stream.outcome).toBe('done');
    expect(shown(played)).toBe(' ');
    const messages = played.stream.frames.filter((f) => f.event === 'message');
    expect(messages.map((f) => (f.data as { text: string }).text)).toEqual(['You rolled a 17.']);
    const [narrated] = ofType(await client.events(id), 'Narrated');
    expect(narrated.data).toMatchObject({ action: { text: ' ' }, textByScript: true });
    // The next ordinary turn is narrated by the model as before.
    const next = await client.play(id, 'do', 'look up');
    expect(shown(next)).toBe(REPLY);
  });

  it('given an Output hook returning "", then the model text is kept and the run is a failure', async () => {
    const id = await client.createAdventure(
      scenario([{ name: 'Empty', output: '({ text: "" })' }]),
    );
    const played = await client.play(id, 'do', 'wait');
    expect(shown(played)).toBe(REPLY);
    const [narrated] = ofType(await client.events(id), 'Narrated');
    expect(narrated.data.textByScript).toBeUndefined();
    expect(ofType(await client.events(id), 'ScriptHookRan')[0].data.outcome).toBe('failed');
  });
});

describe('item 5: the same card object listed twice', () => {
  it("given MagicCards' Library pinning its SETTINGS card to the top every turn, then after three turns there is one SETTINGS card", async () => {
    // MagicCards' shape: the Library sets globalThis.modifier; the hooks end with `void 0`; the
    // modifier finds the SETTINGS card (or makes it) and unshifts it without removing it.
    const library = `
      globalThis.modifier = function (text) {
        const settings = storyCards.find((card) => card.type === "SETTINGS");
        if (settings) storyCards.unshift(settings);
        else storyCards.unshift({ title: "MagicCards Settings", type: "SETTINGS", keys: "", entry: "{}" });
        return { text };
      };`;
    const id = await client.createAdventure(
      scenario([{ name: 'MagicCards', library, input: 'void 0', output: 'void 0' }]),
    );
    for (let turn = 1; turn <= 3; turn++) await client.play(id, 'do', `look around (${turn})`);
    const adventure = await client.expect(200, 'GET', `/v1/adventures/${id}`);
    const cards = adventure.body.storyCards as { name: string; type: string }[];
    expect(cards.filter((card) => card.type === 'SETTINGS')).toHaveLength(1);
    expect(cards[0].name).toBe('MagicCards Settings');
    const failures = ofType(await client.events(id), 'ScriptHookRan').filter(
      (e) => e.data.outcome !== 'ok',
    );
    expect(failures).toEqual([]);
  });
});

describe('item 3: cards a script added follow the story tree', () => {
  it('given an Auto-Cards-like Output hook that makes a card once (its state remembers), when the turn is retried, undone and redone, then the card is there once, gone, and back', async () => {
    // Auto-Cards' shape: the card is made from onOutput, and only the script's state says it
    // was made; a retry hands the script the parent's state, so it makes the card again.
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Auto-Cards',
          output: `if (!state.madeMira) {
              addStoryCard("Mira", "Mira keeps the tower's lamp.", "character");
              state.madeMira = true;
            }
            ({ text })`,
        },
      ]),
    );
    const miras = async () => {
      const adventure = await client.expect(200, 'GET', `/v1/adventures/${id}`);
      return (adventure.body.storyCards as { name: string }[]).filter((c) => c.name === 'Mira')
        .length;
    };
    await client.play(id, 'do', 'climb the stairs');
    expect(await miras()).toBe(1);
    await client.retry(id);
    expect(await miras()).toBe(1);
    await client.retry(id);
    expect(await miras()).toBe(1);
    await client.expect(200, 'POST', `/v1/adventures/${id}/undo`, {});
    expect(await miras()).toBe(0);
    await client.expect(200, 'POST', `/v1/adventures/${id}/redo`, {});
    expect(await miras()).toBe(1);
    // A new branch from the opening makes its own card once.
    await client.expect(200, 'POST', `/v1/adventures/${id}/undo`, {});
    await client.play(id, 'do', 'walk away from the tower');
    expect(await miras()).toBe(1);
    const failures = ofType(await client.events(id), 'ScriptHookRan').filter(
      (e) => e.data.outcome !== 'ok',
    );
    expect(failures).toEqual([]);
  });
});
