// docs/scripting.md §4.1 at the sandbox's level: AI Dungeon's script contract on real isolates
// in real child processes (the built child: `npm run build` first). Fixtures are our own, each
// following a pattern §2 names. The turn-level halves (events, the fake model) are in the apps'
// specs.
import {
  runHookChain,
  type HookChainInput,
  type HookRunRequest,
  type ScriptDefinition,
} from '@chronicle/scripting';
import { ScriptSandboxPool } from './sandbox.pool';
import { aHookRequest } from './testing/hook-request';

let pool: ScriptSandboxPool;
beforeAll(() => {
  pool = new ScriptSandboxPool({ processes: 2 });
});
afterAll(() => pool.close());

async function ok(overrides: Partial<HookRunRequest>) {
  const response = await pool.run(aHookRequest(overrides));
  if (response.outcome !== 'ok' || !response.result) {
    throw new Error(`${response.outcome}: ${response.error}`);
  }
  return response.result;
}

let versions = 0;
function aScript(id: string, sources: Partial<ScriptDefinition>): ScriptDefinition {
  return {
    id,
    name: id,
    version: ++versions,
    enabled: true,
    position: 1,
    library: '',
    input: '',
    context: '',
    output: '',
    ...sources,
  };
}
function chain(overrides: Partial<HookChainInput> & Pick<HookChainInput, 'scripts'>) {
  let n = 0;
  return runHookChain(pool, {
    owner: 'owner-1',
    hook: 'input',
    text: '\n> You go to the store.\n',
    states: {},
    cards: [],
    history: [],
    info: { actionCount: 1, characterNames: [] },
    memory: { context: '', authorsNote: '' },
    budgetMs: 5000,
    newCardId: () => `host-${++n}`,
    ...overrides,
  });
}

describe('the three result styles (C1–C4)', () => {
  it('C1: modifier(text) as the last line', async () => {
    const result = await ok({
      source: 'const modifier = (text) => { return { text: text + "!" }; };\nmodifier(text)',
    });
    expect(result.text).toBe('\n> You go to the store.\n!');
  });

  it('C2: a defined modifier and void 0', async () => {
    const result = await ok({
      source: 'const modifier = (text) => ({ text: text + "?" });\nvoid 0',
    });
    expect(result.text).toBe('\n> You go to the store.\n?');
  });

  it('C3: the Library sets globalThis.modifier, the hook calls nothing', async () => {
    const result = await ok({
      library:
        'globalThis.modifier = function (text) { return { text: text.trim().toUpperCase() }; };',
      source: 'void 0',
    });
    expect(result.text).toBe('> YOU GO TO THE STORE.');
  });

  it('C4: the Library mutates the global text, the hook returns {text}', async () => {
    const result = await ok({ library: 'text = text + "#";', source: '({ text })' });
    expect(result.text).toBe('\n> You go to the store.\n#');
  });

  it('globals: a hook that sets text and stop and returns nothing', async () => {
    const result = await ok({
      source: 'globalThis.stop ??= false; text = "changed"; stop = true;\n',
    });
    expect(result).toMatchObject({ text: 'changed', stop: true });
  });

  it('an object without text keeps the incoming text; the text "stop" means stop', async () => {
    expect(await ok({ source: '({ stop: true })' })).toMatchObject({
      text: '\n> You go to the store.\n',
      stop: true,
    });
    expect(await ok({ source: '({ text: "stop" })' })).toMatchObject({ stop: true });
  });
});

describe('stopping and state (C5, C6, C13, C15)', () => {
  it('C5: {stop: true} and {text: null, stop: true} with state.message stop the chain, state saved', async () => {
    for (const source of [
      'state.message = "ok"; state.seen = true; ({ stop: true })',
      'state.message = "ok"; state.seen = true; ({ text: null, stop: true })',
    ]) {
      const result = await chain({ scripts: [aScript('s', { input: source })] });
      expect(result).toMatchObject({ stopped: true, stopMessage: 'ok' });
      expect(result.states.s).toEqual({ message: 'ok', seen: true });
      expect(result.messages).toEqual([{ scriptId: 's', message: { text: 'ok' } }]);
    }
  });

  it('C6: Input returning "" stops with the notice and keeps the state', async () => {
    const result = await chain({
      scripts: [aScript('s', { input: 'state.n = 1; ({ text: "" })' })],
    });
    expect(result).toMatchObject({ stopped: true, stopMessage: 'script returned empty input' });
    expect(result.states.s).toEqual({ n: 1 });
  });

  it('C13: a counter bumped in all three hooks reads 9 after three turns', async () => {
    const bump = 'state.count = (state.count || 0) + 1; modifier(text)';
    const library = 'function modifier(text) { return { text }; }';
    const script = aScript('s', { library, input: bump, context: bump, output: bump });
    let state: Record<string, unknown> = {};
    for (let turn = 0; turn < 3; turn++) {
      for (const hook of ['input', 'context', 'output'] as const) {
        const result = await chain({ hook, text: 'x', scripts: [script], states: { s: state } });
        state = result.states.s ?? state;
      }
    }
    expect(state).toEqual({ count: 9 });
  });

  it('C13: state = 5 keeps the previous state; a function value is dropped', async () => {
    const five = await chain({
      scripts: [aScript('s', { input: 'state = 5; ({ text })' })],
      states: { s: { kept: 1 } },
    });
    expect(five.states).toEqual({});
    expect(five.runs[0].outcome).toBe('ok');
    const fn = await chain({
      scripts: [aScript('s', { input: 'state.f = function () {}; state.n = 2; ({ text })' })],
    });
    expect(fn.states.s).toEqual({ n: 2 });
  });

  it('C15: state.message "a", "a", "b" over three turns posts two messages', async () => {
    let state: Record<string, unknown> = {};
    const posted: string[] = [];
    for (const value of ['a', 'a', 'b']) {
      const result = await chain({
        scripts: [aScript('s', { input: `state.message = ${JSON.stringify(value)}; ({ text })` })],
        states: { s: state },
      });
      state = result.states.s ?? state;
      posted.push(...result.messages.map((m) => m.message.text));
    }
    expect(posted).toEqual(['a', 'b']);
  });

  it('state.memory is read per field, a later script winning', async () => {
    const result = await chain({
      scripts: [
        aScript('a', {
          position: 1,
          input: 'state.memory.authorsNote = "A"; state.memory.frontMemory = "F"; ({text})',
        }),
        aScript('b', { position: 2, input: 'state.memory.authorsNote = "B"; ({text})' }),
      ],
    });
    expect(result.memory).toEqual({ authorsNote: 'B', frontMemory: 'F' });
  });
});

describe('story-card functions (C16–C19)', () => {
  it('C16: addStoryCard returns the new length; returnCard returns the object; same keys twice make two cards', async () => {
    const result = await ok({
      source: `
        const first = addStoryCard("k", "e");
        const second = addStoryCard("k", "e");
        const card = addStoryCard("", "cfg", "Config", "Dice", "", { returnCard: true });
        log(first, second, typeof card, card.title);
        ({ text })`,
    });
    expect(result.logs).toEqual(['1 2 object Dice']);
    const cards = JSON.parse(result.storyCards!) as Record<string, string>[];
    expect(cards).toHaveLength(3);
    expect(cards[0]).toMatchObject({
      title: 'k',
      keys: 'k',
      entry: 'e',
      type: 'Custom',
      description: '',
    });
    expect(cards[0].id).toMatch(/^\d+$/);
    expect(Number(cards[0].id)).toBeLessThan(1e9);
  });

  it('C16: addStoryCard("%@%") then find by title and fill (Auto-Cards, Inner Self)', async () => {
    const result = await chain({
      scripts: [
        aScript('s', {
          input: `addStoryCard("%@%");
            const card = storyCards.find((c) => c.title === "%@%");
            card.title = "Config"; card.entry = "on"; card.description = JSON.stringify({ v: 1 });
            ({ text })`,
        }),
      ],
    });
    expect(result.cards).toEqual([
      expect.objectContaining({
        title: 'Config',
        keys: '%@%',
        entry: 'on',
        description: '{"v":1}',
      }),
    ]);
    expect(result.cardOps.map((o) => o.op.op)).toEqual(['added']);
  });

  const two = [
    { id: '11', title: 'A', keys: 'a', type: 'character', entry: 'ea', description: 'na' },
    { id: '22', title: 'B', keys: 'b', type: 'location', entry: 'eb', description: 'nb' },
  ];

  it('C17: updateStoryCard replaces the object keeping id, type, title and notes; old references go stale', async () => {
    const result = await ok({
      storyCards: two,
      source: `const old = storyCards[0];
        updateStoryCard(0, "k2", "e2");
        log(old === storyCards[0], old.keys);
        try { updateStoryCard(9, "x", "y"); } catch (e) { log(e.message); }
        ({ text })`,
    });
    expect(result.logs).toEqual(['false a', 'Story card not found at index 9 in updateStoryCard']);
    expect(JSON.parse(result.storyCards!)[0]).toEqual({
      id: '11',
      keys: 'k2',
      entry: 'e2',
      type: 'character',
      title: 'A',
      description: 'na',
    });
  });

  it('C17: removeStoryCard shifts later indices, accepts string indices and throws when missing', async () => {
    const result = await ok({
      storyCards: two,
      source: `removeStoryCard("0");
        log(storyCards[0].title);
        try { removeStoryCard(5); } catch (e) { log(e.message); }
        ({ text })`,
    });
    expect(result.logs).toEqual(['B', 'Story card not found at index 5 in removeStoryCard']);
  });

  it('C18: direct mutation records Added (id assigned), Updated and Reordered with the script id', async () => {
    const result = await chain({
      cards: two,
      scripts: [
        aScript('s', {
          input: `storyCards[0].title = "A2";
            storyCards.push({ title: "pushed", keys: ["x", "y"], entry: "e" });
            storyCards.unshift(storyCards.splice(1, 1)[0]);
            ({ text })`,
        }),
      ],
    });
    const ops = result.cardOps.map((o) => ({ scriptId: o.scriptId, op: o.op.op }));
    expect(ops).toEqual([
      { scriptId: 's', op: 'updated' },
      { scriptId: 's', op: 'added' },
      { scriptId: 's', op: 'reordered' },
    ]);
    expect(result.cards.map((c) => c.title)).toEqual(['B', 'A2', 'pushed']);
    expect(result.cards[2]).toMatchObject({ id: 'host-1', keys: 'x,y' });
  });

  it('the same card object listed twice is one card (MagicCards pins its settings card every turn)', async () => {
    // MagicCards' shape: find the SETTINGS card and unshift it to the top without removing it.
    const pin = `const settings = storyCards.find((card) => card.type === "SETTINGS");
      if (settings) storyCards.unshift(settings);
      else storyCards.unshift({ title: "MagicCards Settings", type: "SETTINGS", keys: "", entry: "{}" });
      ({ text })`;
    let cards = two;
    for (let turn = 1; turn <= 3; turn++) {
      const result = await chain({ cards, scripts: [aScript('magic', { input: pin })] });
      expect(result.runs[0].outcome).toBe('ok');
      cards = result.cards;
      expect(cards.map((c) => c.title)).toEqual(['MagicCards Settings', 'A', 'B']);
      const added = result.cardOps.filter((o) => o.op.op === 'added');
      expect(added).toHaveLength(turn === 1 ? 1 : 0);
    }
    // Two different objects with one id are still two cards (a copy gets a new id).
    const copied = await chain({
      cards: two,
      scripts: [aScript('copy', { input: 'storyCards.push({ ...storyCards[0] }); ({ text })' })],
    });
    expect(copied.cards.map((c) => c.title)).toEqual(['A', 'B', 'A']);
    expect(new Set(copied.cards.map((c) => c.id)).size).toBe(3);
  });

  it('C19: the legacy names', async () => {
    const result = await ok({
      source: `const n = addWorldEntry("w", "entry", true);
        updateWorldEntry(0, "w2", "entry2");
        sandboxConsole.log(worldInfo === storyCards, worldEntries === storyCards, n);
        console.log(history[1].rawText === history[1].text);
        removeWorldEntry(0);
        ({ text })`,
    });
    expect(result.logs).toEqual(['true true 1', 'true']);
    expect(result.storyCards).toBe('[]');
  });
});

describe('history, info and the environment (C20, C22–C24)', () => {
  it('C20: history oldest first with types; writes to history and info are not kept', async () => {
    const script = aScript('s', {
      context: `log(history.map((h) => h.type).join(","), history[0].text, history.length,
          info.actionCount, info.maxChars, info.memoryLength, info.characters[0].name);
        history[0].text = "changed"; history.push({}); info.actionCount = 99;
        ({ text })`,
    });
    const history = [
      { text: 'You stand at the door.', type: 'start' as const },
      { text: '\n> You look around.\n', type: 'do' as const },
      { text: 'The street is empty.', type: 'continue' as const },
    ];
    const info = { actionCount: 4, characterNames: ['Ada'], maxChars: 4000, memoryLength: 20 };
    for (let run = 0; run < 2; run++) {
      const result = await chain({
        hook: 'context',
        text: 'ctx',
        history,
        info,
        scripts: [script],
      });
      expect(result.runs[0].logs).toEqual([
        'start,do,continue You stand at the door. 3 4 4000 20 Ada',
      ]);
    }
  });

  it('C22: a Library const is visible in the hook; the same const in both fails the script, text kept', async () => {
    expect((await ok({ library: 'const x = "lib";', source: '({ text: x })' })).text).toBe('lib');
    const result = await chain({
      scripts: [aScript('s', { library: 'const x = 1;', input: 'const x = 2; ({ text: "no" })' })],
    });
    expect(result.text).toBe('\n> You go to the store.\n');
    expect(result.runs[0]).toMatchObject({ outcome: 'failed' });
    expect(result.runs[0].error).toMatch(/already been declared/);
  });

  it('C23: logs are JSON ({a: undefined} → {}, undefined → null) and capped at 200 lines', async () => {
    const result = await ok({
      source:
        'log({ a: undefined }); log(undefined); for (let i = 0; i < 1e6; i++) log(i); ({ text })',
    });
    expect(result.logs.slice(0, 3)).toEqual(['{}', 'null', '0']);
    expect(result.logs).toHaveLength(200);
    expect(result.logsDropped).toBe(1e6 - 198);
  });

  it('C24: eval, Function, Date, Intl with timeZone and localeCompare work', async () => {
    const result = await ok({
      source: `const viaEval = eval("1 + 1");
        const viaFunction = Object.constructor.constructor("return 3")();
        const viaNew = new Function("a", "return a * 2")(4);
        const when = new Date(Date.UTC(2026, 0, 1, 12)).toLocaleString("en-US", { timeZone: "Asia/Tokyo" });
        log(viaEval, viaFunction, viaNew, when, "a".localeCompare("b"), typeof Math.random());
        ({ text })`,
    });
    expect(result.logs).toEqual(['2 3 8 1/1/2026, 9:00:00 PM -1 number']);
  });

  it('ES2022–23: ??=, replaceAll, private fields, findLast', async () => {
    const result = await ok({
      source: `class A { #x = 1; get x() { return this.#x; } }
        let u; u ??= "d";
        log(new A().x, u, "a-a".replaceAll("-", "+"), [1, 2, 3].findLast((n) => n < 3));
        ({ text })`,
    });
    expect(result.logs).toEqual(['1 d a+a 2']);
  });
});

describe('several scripts (C26) on real isolates', () => {
  it('order, private states, shared cards; stop in the first skips the second; a throw leaves the second', async () => {
    const second = aScript('b', {
      position: 2,
      input: 'state.mine = "b"; state.cardsSeen = storyCards.length; ({ text: text + "B" })',
    });
    const result = await chain({
      scripts: [
        second,
        aScript('a', {
          position: 1,
          input: 'state.mine = "a"; addStoryCard("k", "e"); ({ text: text + "A" })',
        }),
      ],
    });
    expect(result.text).toBe('\n> You go to the store.\nAB');
    expect(result.states).toEqual({ a: { mine: 'a' }, b: { mine: 'b', cardsSeen: 1 } });

    const stopped = await chain({
      scripts: [aScript('a', { position: 1, input: '({ stop: true })' }), second],
    });
    expect(stopped.runs.map((r) => r.scriptId)).toEqual(['a']);

    const thrown = await chain({
      scripts: [
        aScript('a', { position: 1, input: 'addStoryCard("x"); throw new Error("no")' }),
        second,
      ],
    });
    expect(thrown.text).toBe('\n> You go to the store.\nB');
    expect(thrown.cards).toEqual([]);
    expect(thrown.runs.map((r) => r.outcome)).toEqual(['failed', 'ok']);
  });
});

// docs/multiplayer.md §3.6 on a real isolate: a room's script sees its characters and the actor,
// and a message for one of them comes back addressed to them.
describe('a script in a room', () => {
  it('given Mira and Bo, when Bo acts, then the input hook reads info.characters and info.actor, and its message names Mira', async () => {
    const script = aScript('room', {
      input: `log(info.characters.map((c) => c.name).join("+"), info.characterNames.length, info.actor);
        state.message = { text: "Bo moved.", visibleTo: [info.characters[0].name] };
        ({ text })`,
    });
    const result = await chain({
      text: '\n> Bo draws his sword.\n',
      info: {
        actionCount: 2,
        characterNames: ['Mira', 'Bo'],
        characters: [{ name: 'Mira' }, { name: 'Bo' }],
        actor: 'Bo',
      },
      scripts: [script],
    });
    expect(result.runs[0]).toMatchObject({ outcome: 'ok', logs: ['Mira+Bo 2 Bo'] });
    expect(result.messages).toEqual([
      { scriptId: 'room', message: { text: 'Bo moved.', visibleTo: ['Mira'] } },
    ]);
  });
});
