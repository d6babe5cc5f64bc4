// Scenario scripts through the built apps (docs/scripting.md §0, §4): the HTTP surface, the
// save-time checks, and onInput on the turn path with the fake model as the narrator. What is
// asserted is what the log holds, what the stream sends and what the model was asked.
import { AppSystem } from '@chronicle/testing';
import { autoCardsScript } from '../../libs/script-sandbox/src/testing/auto-cards-fixture';
import { ChronicleClient, ofType } from './support/chronicle.client';

jest.setTimeout(180_000);

const CHAT = '/v1/chat/completions';
let system: AppSystem;
let client: ChronicleClient;

beforeAll(async () => {
  system = await AppSystem.start({ apps: ['api', 'context-worker'], fake: { instant: true } });
  system.fake.setDefaultReply(() => ({ text: 'The lamp gutters in the wind.' }));
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
});

const scenario = (scripts: Record<string, unknown>[] = []) => ({
  title: 'The Lighthouse',
  opening: 'You stand at the foot of the lighthouse stairs.',
  plotEssentials: 'The keeper vanished a week ago.',
  scripts,
});
const scriptsOf = (id: string) => `/v1/adventures/${id}/scripts`;
const prompts = () =>
  system.fake
    .requestsTo(CHAT)
    .map((r) => (r.body?.messages ?? []).map((m: { content: string }) => m.content).join('\n'));

describe('the script routes', () => {
  it('adds, lists in run order, edits (a new version), reorders and removes', async () => {
    const id = await client.createAdventure(scenario([{ name: 'First', input: 'modifier(text)' }]));
    const added = await client.expect(201, 'POST', scriptsOf(id), {
      name: 'Second',
      library: 'function modifier(text) { return { text }; }',
      input: 'void 0',
    });
    expect(added.body).toMatchObject({ name: 'Second', position: 2, enabled: true, version: 1 });
    const listed = await client.expect(200, 'GET', scriptsOf(id));
    expect(listed.body.scripts.map((s: { name: string }) => s.name)).toEqual(['First', 'Second']);
    const first = listed.body.scripts[0].id as string;

    const edited = await client.expect(200, 'PATCH', `${scriptsOf(id)}/${added.body.id}`, {
      enabled: false,
    });
    expect(edited.body).toMatchObject({ enabled: false, version: 2 });

    const reordered = await client.expect(200, 'PUT', `${scriptsOf(id)}/order`, {
      ids: [added.body.id, first],
    });
    expect(reordered.body.scripts.map((s: { id: string }) => s.id)).toEqual([added.body.id, first]);
    expect((await client.request('PUT', `${scriptsOf(id)}/order`, { ids: [first] })).status).toBe(
      400,
    );

    await client.expect(200, 'DELETE', `${scriptsOf(id)}/${first}`);
    expect((await client.expect(200, 'GET', scriptsOf(id))).body.scripts).toHaveLength(1);
    expect(ofType(await client.events(id), 'ScriptRemoved')).toHaveLength(1);
  });

  it('answers a syntax error with 422, its line and column, and writes nothing', async () => {
    const id = await client.createAdventure(scenario());
    const before = (await client.events(id)).length;
    const refused = await client.request('POST', scriptsOf(id), {
      name: 'Broken',
      input: 'const ok = 1;\nlet = ;',
    });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/input has a syntax error at line 2, column \d+/);
    expect((await client.events(id)).length).toBe(before);
    const scenarioRefused = await client.request(
      'POST',
      '/v1/adventures',
      scenario([{ name: 'B', output: '}' }]),
    );
    expect(scenarioRefused.status).toBe(422);
  });

  it('S11: a Library of 4 MiB + 1 byte is 422 at save; 4 MiB is accepted', async () => {
    const id = await client.createAdventure(scenario());
    const big = await client.request('POST', scriptsOf(id), {
      name: 'Big',
      library: `//${'x'.repeat(4 * 1024 * 1024 - 1)}`,
    });
    expect(big.status).toBe(422);
    expect(big.body.message).toMatch(/library is 4194305 bytes; the limit is 4194304/);
    await client.expect(201, 'POST', scriptsOf(id), {
      name: 'Fits',
      library: `//${'x'.repeat(4 * 1024 * 1024 - 2)}`,
    });
  });

  it('Script Test runs one hook on the projection and appends nothing', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Cards',
          input: 'state.n = 1; addStoryCard("k", "e"); log("hi"); ({ text: text + "!" })',
        },
      ]),
    );
    const before = (await client.events(id)).length;
    const tested = await client.expect(200, 'POST', `${scriptsOf(id)}/test`, {
      hook: 'input',
      text: '\n> You climb.\n',
    });
    expect(tested.body).toMatchObject({ text: '\n> You climb.\n!', stop: false, logs: ['hi'] });
    expect(tested.body.cardOps).toEqual([
      expect.objectContaining({ op: expect.objectContaining({ op: 'added' }) }),
    ]);
    expect((await client.events(id)).length).toBe(before);
  });
});

describe('onInput on the turn path', () => {
  it('C1: modifier(text) appends "!" → PlayerActed stores it, the typed text beside it, the model sees it', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Bang',
          input:
            'state.turns = (state.turns || 0) + 1;\nconst modifier = (text) => ({ text: text.trimEnd() + "!\\n" });\nmodifier(text)',
        },
      ]),
    );
    const played = await client.play(id, 'do', 'climb the stairs');
    expect(played.stream.outcome).toBe('done');
    const events = await client.events(id);
    const [acted] = ofType(events, 'PlayerActed');
    expect(acted.data.action.text).toBe('> You climb the stairs.!');
    expect(acted.data.typedText).toBe('> You climb the stairs.');
    expect(ofType(events, 'ScriptHookRan')[0].data).toMatchObject({
      hook: 'input',
      outcome: 'ok',
      textChanged: true,
    });
    expect(prompts().some((p) => p.includes('> You climb the stairs.!'))).toBe(true);
    const scriptId = (await client.expect(200, 'GET', scriptsOf(id))).body.scripts[0].id;
    expect((await client.expect(200, 'GET', `${scriptsOf(id)}/${scriptId}/state`)).body).toEqual({
      state: { turns: 1 },
    });
    const logs = await client.expect(200, 'GET', `${scriptsOf(id)}/logs`);
    expect(logs.body.runs[0]).toMatchObject({ scriptId, hook: 'input', outcome: 'ok' });

    // Script state follows the head: after an undo, the state is the parent's.
    await client.play(id, 'do', 'open the door');
    expect(
      (await client.expect(200, 'GET', `${scriptsOf(id)}/${scriptId}/state`)).body.state,
    ).toEqual({ turns: 2 });
    await client.expect(200, 'POST', `/v1/adventures/${id}/undo`, {});
    expect(
      (await client.expect(200, 'GET', `${scriptsOf(id)}/${scriptId}/state`)).body.state,
    ).toEqual({ turns: 1 });
  });

  it('C5: {text: null, stop: true} with state.message → no PlayerActed, no model call, stopped {message}', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Command',
          input: 'state.message = "ok"; state.used = true; ({ text: null, stop: true })',
        },
      ]),
    );
    const requests = system.fake.requestsTo(CHAT).length;
    const played = await client.play(id, 'do', '/roll');
    expect(played.stream.outcome).toBe('stopped');
    expect(played.stream.final).toEqual({ message: 'ok' });
    expect(played.stream.frames.map((f) => f.event)).toContain('message');
    const events = await client.events(id);
    expect(ofType(events, 'PlayerActed')).toHaveLength(0);
    expect(ofType(events, 'TurnStoppedByScript')[0].data).toMatchObject({
      hook: 'input',
      message: 'ok',
    });
    expect(ofType(events, 'ScriptStateChanged')[0].data.state).toEqual({
      message: 'ok',
      used: true,
    });
    expect(ofType(events, 'ScriptMessagePosted')[0].data.message).toBe('ok');
    await new Promise((r) => setTimeout(r, 300));
    expect(system.fake.requestsTo(CHAT).length).toBe(requests);
    const status = await client.turn(id, played.accepted.turnId);
    expect(status.body).toMatchObject({ status: 'stopped', message: 'ok' });
  });

  it('C6: Input returning "" stops with the notice; a throwing script leaves the text alone', async () => {
    const empty = await client.createAdventure(
      scenario([{ name: 'Empty', input: '({ text: "" })' }]),
    );
    const stopped = await client.play(empty, 'say', 'hello');
    expect(stopped.stream.final).toEqual({ message: 'script returned empty input' });

    const throwing = await client.createAdventure(
      scenario([{ name: 'Thrower', input: 'throw new Error("nope")' }]),
    );
    const played = await client.play(throwing, 'do', 'wait');
    expect(played.stream.outcome).toBe('done');
    const events = await client.events(throwing);
    expect(ofType(events, 'PlayerActed')[0].data.action.text).toBe('> You wait.');
    expect(ofType(events, 'ScriptHookRan')[0].data).toMatchObject({
      outcome: 'failed',
      error: 'Thrower (input): nope',
    });
  });

  it('C21: continue runs no Input hook', async () => {
    const id = await client.createAdventure(
      scenario([{ name: 'Counter', input: 'state.n = 1; ({ text })' }]),
    );
    await client.play(id, 'continue', '');
    expect(ofType(await client.events(id), 'ScriptHookRan')).toHaveLength(0);
  });

  it('C18: cards a script adds and edits are story cards, with their source', async () => {
    const id = await client.createAdventure(
      scenario([
        { name: 'Maker', input: 'addStoryCard("%@%"); storyCards[0].title = "Config"; ({ text })' },
      ]),
    );
    await client.play(id, 'do', 'look');
    const events = await client.events(id);
    const [added] = ofType(events, 'StoryCardAdded');
    expect(added.data.card).toMatchObject({ name: 'Config', keys: '%@%', type: 'Custom' });
    expect(added.data.source).toMatchObject({ hook: 'input' });
  });
});

describe('cards a script makes (C16)', () => {
  it('a card added in Input triggers in the context of the same turn and the next', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Lore',
          input:
            'if (!storyCards.some((c) => c.title === "Bell")) addStoryCard("bell", "The bell is cracked.", "Custom", "Bell"); ({ text })',
        },
      ]),
    );
    await client.play(id, 'do', 'ring the bell');
    const prompt = () =>
      (system.fake.requestsTo(CHAT).at(-1)!.body?.messages ?? [])
        .map((m: { content: string }) => m.content)
        .join('\n');
    expect(prompt()).toContain('World Lore: The bell is cracked.');
    await client.play(id, 'do', 'listen to the bell');
    expect(prompt()).toContain('World Lore: The bell is cracked.');
    expect(ofType(await client.events(id), 'StoryCardAdded')).toHaveLength(1);
  });
});

describe('onModelContext and onOutput in the context worker', () => {
  const lastRequest = () => system.fake.requestsTo(CHAT).at(-1)!;
  const messages = (r: ReturnType<typeof lastRequest>) =>
    (r.body?.messages ?? []) as { role: string; content: string }[];

  async function promptWith(scripts: Record<string, unknown>[]) {
    const id = await client.createAdventure(scenario(scripts));
    const played = await client.play(id, 'do', 'climb the stairs');
    return { id, played, messages: messages(lastRequest()) };
  }

  it('C7: Context returning "" or throwing sends exactly the no-script request', async () => {
    const plain = await promptWith([]);
    for (const context of ['({ text: "" })', 'throw new Error("x")']) {
      const scripted = await promptWith([{ name: 'Ctx', context }]);
      expect(scripted.messages).toEqual(plain.messages);
    }
  });

  it('C8: Context appending "\\nX" adds a section before the reminder; the system text is byte-identical', async () => {
    const plain = await promptWith([]);
    const scripted = await promptWith([
      { name: 'Append', context: '({ text: text + "\\nAppended by script." })' },
    ]);
    expect(scripted.messages[0]).toEqual(plain.messages[0]);
    const story = scripted.messages.at(-1)!.content;
    const native = plain.messages.at(-1)!.content;
    expect(story).toContain('Appended by script.');
    expect(story.replace('Appended by script.\n\n', '')).toBe(native);
    const [ran] = ofType(await client.events(scripted.id), 'ScriptHookRan');
    expect(ran.data).toMatchObject({ hook: 'context', contextChange: 'append' });
  });

  it('C10: Context stop → no model call, the player action kept, stopped', async () => {
    const id = await client.createAdventure(
      scenario([{ name: 'Stop', context: '({ text, stop: true })' }]),
    );
    const before = system.fake.requestsTo(CHAT).length;
    const played = await client.play(id, 'do', 'wait');
    expect(played.stream.outcome).toBe('stopped');
    expect(played.stream.final).toEqual({
      message: expect.stringMatching(/^Sorry, the AI is stumped/),
    });
    expect(system.fake.requestsTo(CHAT).length).toBe(before);
    const events = await client.events(id);
    expect(ofType(events, 'PlayerActed')).toHaveLength(1);
    expect(ofType(events, 'TurnStoppedByScript')[0].data.hook).toBe('context');
    // The adventure is not stuck: the next turn runs.
    expect((await client.act(id, 'continue', '')).status).toBe(202);
  });

  it('C11: Output upper-cases → stored narration upper-case, done carries it', async () => {
    const { id, played } = await promptWith([
      { name: 'Shout', output: '({ text: text.toUpperCase() })' },
    ]);
    expect(played.stream.outcome).toBe('done');
    expect((played.stream.final as { action: { text: string } }).action.text).toBe(
      'THE LAMP GUTTERS IN THE WIND.',
    );
    const [narrated] = ofType(await client.events(id), 'Narrated');
    expect(narrated.data.action.text).toBe('THE LAMP GUTTERS IN THE WIND.');
  });

  it('C13, C14: a counter in all hooks reads 9 after 3 turns; authorsNote from Input this turn, from Output the next', async () => {
    const bump = 'state.count = (state.count || 0) + 1;';
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Counter',
          input: `${bump} state.memory.authorsNote = "from input " + state.count; ({ text })`,
          context: `${bump} ({ text })`,
          output: `${bump} state.memory.frontMemory = "front " + state.count; ({ text })`,
        },
      ]),
    );
    for (let turn = 1; turn <= 3; turn++) {
      await client.play(id, 'do', `step ${turn}`);
      const prompt = messages(lastRequest())
        .map((m) => m.content)
        .join('\n');
      // Input of this turn set count 3t-2; Output of the previous turn set front 3(t-1).
      expect(prompt).toContain(`[Author's note: from input ${3 * turn - 2}]`);
      if (turn > 1) expect(prompt).toContain(`front ${3 * (turn - 1)}`);
      else expect(prompt).not.toContain('front ');
    }
    const scriptId = (await client.expect(200, 'GET', scriptsOf(id))).body.scripts[0].id;
    const state = await client.expect(200, 'GET', `${scriptsOf(id)}/${scriptId}/state`);
    expect(state.body.state.count).toBe(9);
  });
});

describe('scripts travel with the adventure', () => {
  it('export/import carry the scripts and their state; at/:version shows them as they were', async () => {
    const id = await client.createAdventure(
      scenario([{ name: 'Counter', input: 'state.n = (state.n || 0) + 1; ({ text })' }]),
    );
    await client.play(id, 'do', 'wait');
    const exported = await fetch(`${system.apiUrl}/v1/adventures/${id}/export`, {
      headers: client.authorization('/v1/adventures'),
    });
    const ndjson = await exported.text();
    const imported = await fetch(`${system.apiUrl}/v1/adventures/import`, {
      method: 'POST',
      headers: {
        ...client.authorization('/v1/adventures'),
        'content-type': 'application/x-ndjson',
      },
      body: ndjson,
    });
    expect(imported.status).toBe(201);
    const copy = ((await imported.json()) as { adventureId: string }).adventureId;
    const scripts = (await client.expect(200, 'GET', scriptsOf(copy))).body.scripts;
    expect(scripts.map((s: { name: string }) => s.name)).toEqual(['Counter']);
    const state = await client.expect(200, 'GET', `${scriptsOf(copy)}/${scripts[0].id}/state`);
    expect(state.body.state).toEqual({ n: 1 });

    const added = ofType(await client.events(id), 'ScriptAdded')[0];
    const at = await client.expect(200, 'GET', `/v1/adventures/${id}/at/${added.version}`);
    expect(at.body.projection.scripts.map((s: { name: string }) => s.name)).toEqual(['Counter']);
  });

  it('an imported script over the size limit is refused', async () => {
    const id = await client.createAdventure(scenario([{ name: 'Small', library: '//' }]));
    const ndjson = await (
      await fetch(`${system.apiUrl}/v1/adventures/${id}/export`, {
        headers: client.authorization('/v1/adventures'),
      })
    ).text();
    const lines = ndjson.trimEnd().split('\n');
    const at = lines.findIndex((line) => line.includes('"ScriptAdded"'));
    const event = JSON.parse(lines[at]);
    event.data.script.library = '/'.repeat(4 * 1024 * 1024 + 1);
    lines[at] = JSON.stringify(event);
    const refused = await fetch(`${system.apiUrl}/v1/adventures/import`, {
      method: 'POST',
      headers: {
        ...client.authorization('/v1/adventures'),
        'content-type': 'application/x-ndjson',
      },
      body: lines.join('\n'),
    });
    expect(refused.status).toBe(400);
  });
});

describe('retry, undo and a long-running script', () => {
  const lastPrompt = () =>
    (system.fake.requestsTo(CHAT).at(-1)!.body?.messages ?? [])
      .map((m: { content: string }) => m.content)
      .join('\n');

  it('C9, S13: a rewrite keeping text.slice(0, info.memoryLength) sends Plot Essentials once and fits the budget', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Rewrite',
          context:
            'log(info.maxChars, info.memoryLength); ({ text: text.slice(0, info.memoryLength) + "Only this story." + "x".repeat(info.maxChars * 2) })',
        },
      ]),
    );
    await client.play(id, 'do', 'look');
    const prompt = lastPrompt();
    expect(prompt.split('The keeper vanished a week ago.').length - 1).toBe(1);
    const [ran] = ofType(await client.events(id), 'ScriptHookRan');
    expect(ran.data.contextChange).toBe('rewrite');
    const [maxChars] = (ran.data.logs[0] as string).split(' ').map(Number);
    const story = system.fake.requestsTo(CHAT).at(-1)!.body.messages.at(-1).content as string;
    expect(story.length).toBeLessThanOrEqual(maxChars + 2_000);
    expect(story).not.toContain('Only this story.'); // cut from the front
  });

  it('C12: Output returning "" keeps the model prose and logs the failure', async () => {
    const id = await client.createAdventure(
      scenario([{ name: 'Blank', output: '({ text: "" })' }]),
    );
    const played = await client.play(id, 'do', 'wait');
    expect((played.stream.final as { action: { text: string } }).action.text).toBe(
      'The lamp gutters in the wind.',
    );
    expect(ofType(await client.events(id), 'ScriptHookRan')[0].data.outcome).toBe('failed');
  });

  it('C21: a retry reruns Context and Output from the parent state, not Input', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Hooks',
          input: 'state.input = (state.input || 0) + 1; ({ text })',
          output: 'state.output = (state.output || 0) + 1; ({ text })',
        },
      ]),
    );
    await client.play(id, 'do', 'wait');
    const scriptId = (await client.expect(200, 'GET', scriptsOf(id))).body.scripts[0].id;
    const stateUrl = `${scriptsOf(id)}/${scriptId}/state`;
    expect((await client.expect(200, 'GET', stateUrl)).body.state).toEqual({ input: 1, output: 1 });
    await client.retry(id);
    expect((await client.expect(200, 'GET', stateUrl)).body.state).toEqual({ input: 1, output: 1 });
    const runs = ofType(await client.events(id), 'ScriptHookRan').map((e) => e.data.hook);
    expect(runs).toEqual(['input', 'output', 'output']);
  });

  it('C25: an Auto-Cards-like script over 10 turns with retries and undos: no errors, no duplicate titles', async () => {
    const script = autoCardsScript();
    const id = await client.createAdventure(
      scenario([
        {
          name: script.name,
          library: script.library,
          input: script.input,
          context: script.context,
          output: script.output,
        },
      ]),
    );
    system.fake.setDefaultReply(() => ({
      text: 'Mira and Captain Voss argue with Tobias by the Saltmarch lighthouse.',
    }));
    try {
      for (let turn = 1; turn <= 10; turn++) {
        await client.play(id, 'do', `ask Mira about the light (${turn})`);
        if (turn % 3 === 0) await client.retry(id);
        if (turn % 4 === 0) await client.expect(200, 'POST', `/v1/adventures/${id}/undo`, {});
      }
    } finally {
      system.fake.setDefaultReply(() => ({ text: 'The lamp gutters in the wind.' }));
    }
    const events = await client.events(id);
    const failures = ofType(events, 'ScriptHookRan').filter((e) => e.data.outcome !== 'ok');
    expect(failures.map((e) => e.data.error)).toEqual([]);
    const adventure = await client.expect(200, 'GET', `/v1/adventures/${id}`);
    const titles = (adventure.body.storyCards as { name: string }[]).map(
      (c: { name: string }) => c.name,
    );
    expect(titles).toContain('Configure Auto-Cards');
    expect(new Set(titles).size).toBe(titles.length);
  });
});

describe("the adventure's script settings, notices and info (spec §1.3, §3.2, §3.5, §3.6)", () => {
  const lastStory = () =>
    system.fake.requestsTo(CHAT).at(-1)!.body.messages.at(-1).content as string;
  const runsOf = async (id: string, hook: string) =>
    ofType(await client.events(id), 'ScriptHookRan').filter((e) => e.data.hook === hook);
  const busy = (ms: number) => `const t0 = Date.now(); while (Date.now() - t0 < ${ms}) {}`;

  it('append-only discards a rewrite with a notice, info.useCacheEfficient says so; full (set later) applies it', async () => {
    const id = await client.createAdventure({
      ...scenario([
        {
          name: 'Rewriter',
          context: 'log(String(info.useCacheEfficient)); ({ text: "Only this story." })',
        },
      ]),
      settings: { contextHookMode: 'append-only' },
    });
    const played = await client.play(id, 'do', 'look');
    expect(lastStory()).not.toContain('Only this story.');
    const [discarded] = await runsOf(id, 'context');
    expect(discarded.data.contextChange).toBe('discarded');
    expect(discarded.data.logs).toEqual([
      'true',
      '[chronicle] append-only context discards a rewrite',
    ]);
    const notices = played.stream.frames.filter((f) => f.event === 'notice');
    expect(notices).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ hook: 'context' }) }),
    ]);
    const turn = await client.expect(
      200,
      'GET',
      `/v1/adventures/${id}/turns/${played.accepted.turnId}`,
    );
    expect(turn.body.notices).toEqual([
      expect.stringMatching(/"Rewriter" changed the context .* append-only context mode/),
    ]);

    await client.expect(200, 'PATCH', `/v1/adventures/${id}`, {
      settings: { contextHookMode: 'full' },
    });
    expect(ofType(await client.events(id), 'AdventureEdited').at(-1)!.data.settings).toEqual({
      contextHookMode: 'full',
    });
    await client.play(id, 'do', 'look again');
    expect(lastStory()).toContain('Only this story.');
    const runs = await runsOf(id, 'context');
    expect(runs.at(-1)!.data).toMatchObject({ contextChange: 'rewrite', logs: ['false'] });
    expect(
      (
        await client.request('PATCH', `/v1/adventures/${id}`, {
          settings: { contextHookMode: 'sometimes' },
        })
      ).status,
    ).toBe(400);
  });

  it('append-only takes an append only from a // @cache-compatible hook', async () => {
    const append = '({ text: text + "\\nA gull watches from the rail." })';
    const id = await client.createAdventure({
      ...scenario([
        { name: 'Plain', context: append },
        { name: 'Compatible', context: `// @cache-compatible\n${append}`, enabled: false },
      ]),
      settings: { contextHookMode: 'append-only' },
    });
    await client.play(id, 'do', 'look');
    expect(lastStory()).not.toContain('A gull watches');
    expect((await runsOf(id, 'context'))[0].data.contextChange).toBe('discarded');
    const scripts = (await client.expect(200, 'GET', scriptsOf(id))).body.scripts as {
      id: string;
    }[];
    await client.expect(200, 'PATCH', `${scriptsOf(id)}/${scripts[0].id}`, { enabled: false });
    await client.expect(200, 'PATCH', `${scriptsOf(id)}/${scripts[1].id}`, { enabled: true });
    await client.play(id, 'do', 'look again');
    expect(lastStory()).toContain('A gull watches from the rail.');
    expect((await runsOf(id, 'context')).at(-1)!.data.contextChange).toBe('append');
  });

  it("a rewrite's lost prompt cache is in the turn's usage; an unchanged context reports none", async () => {
    const long = 'The keeper climbs the stairs and counts every step again. '.repeat(150);
    const id = await client.createAdventure({
      ...scenario([{ name: 'Rewriter', context: '({ text: "A short new story." })' }]),
      opening: long,
    });
    await client.play(id, 'do', 'look');
    const [narrated] = ofType(await client.events(id), 'Narrated');
    expect(narrated.data.usage.scriptCacheLossTokens).toBeGreaterThanOrEqual(1024);

    const plain = await client.createAdventure({
      ...scenario([{ name: 'Reader', context: 'modifier(text)' }]),
      opening: long,
    });
    await client.play(plain, 'do', 'look');
    const [kept] = ofType(await client.events(plain), 'Narrated');
    expect(kept.data.usage.scriptCacheLossTokens).toBeUndefined();
  });

  it('info.contextTokens in Context and Output; info.emptyOutputReason only for an empty reply, which onOutput may fill', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Info',
          context: 'log(typeof info.contextTokens, info.contextTokens); ({ text })',
          output:
            'log(String(info.contextTokens), String(info.emptyOutputReason)); ({ text: text || "[empty: " + info.emptyOutputReason + "]" })',
        },
      ]),
    );
    await client.play(id, 'do', 'look');
    const [context] = await runsOf(id, 'context');
    const [kind, tokens] = (context.data.logs[0] as string).split(' ');
    expect(kind).toBe('number');
    expect(Number(tokens)).toBeGreaterThan(0);
    const [narrated] = ofType(await client.events(id), 'Narrated');
    const [output] = await runsOf(id, 'output');
    expect(output.data.logs).toEqual([`${narrated.data.usage.promptTokens} undefined`]);

    system.fake.enqueue({ text: '', finishReason: 'length' });
    const empty = await client.play(id, 'do', 'wait');
    expect((empty.stream.final as { action: { text: string } }).action.text).toBe(
      '[empty: length]',
    );
    expect((await runsOf(id, 'output')).at(-1)!.data.logs[0]).toMatch(/ length$/);
  });

  it('a failing script is a player notice on the stream and in the turn, without its engine message', async () => {
    const id = await client.createAdventure(
      scenario([
        {
          name: 'Broken',
          input: 'throw new Error("secret /srv/engine detail")',
          output: 'null.boom',
        },
      ]),
    );
    const played = await client.play(id, 'do', 'look');
    expect(played.stream.outcome).toBe('done');
    const notices = played.stream.frames.filter((f) => f.event === 'notice');
    expect(notices.map((f) => (f.data as { hook: string }).hook)).toEqual(['input', 'output']);
    expect((notices[0].data as { text: string }).text).toBe(
      'The script "Broken" failed in its input hook (it threw an error); the turn went on without it.',
    );
    expect(JSON.stringify(notices)).not.toMatch(/secret|\/srv|TypeError/);
    const turn = await client.expect(
      200,
      'GET',
      `/v1/adventures/${id}/turns/${played.accepted.turnId}`,
    );
    expect(turn.body.notices).toHaveLength(2);
    // The owner still has the detail in the run's record.
    const [input] = await runsOf(id, 'input');
    expect(input.data.error).toMatch(/^Broken \(input\): secret /);
  });

  it("the adventure's hook limit applies under the operator's, and one budget spans the turn", async () => {
    const limited = await client.createAdventure({
      ...scenario([{ name: 'Slow', context: `${busy(1_500)}; ({ text })` }]),
      settings: { scriptHookTimeoutMs: 150 },
    });
    await client.play(limited, 'do', 'look');
    const [slow] = await runsOf(limited, 'context');
    expect(slow.data.outcome).toBe('timeout');
    expect(slow.data.ms).toBeLessThan(900);

    // onInput spends ~400 ms of a 700 ms turn budget in the API; the worker's Context hook gets
    // the rest, not 700 ms of its own.
    const budgeted = await client.createAdventure({
      ...scenario([
        { name: 'Both', input: `${busy(400)}; ({ text })`, context: `${busy(3_000)}; ({ text })` },
      ]),
      settings: { scriptTurnBudgetMs: 700 },
    });
    await client.play(budgeted, 'do', 'look');
    const [input] = await runsOf(budgeted, 'input');
    const [context] = await runsOf(budgeted, 'context');
    expect(input.data.outcome).toBe('ok');
    expect(context.data.outcome).toBe('timeout');
    expect(context.data.ms).toBeLessThan(700 - input.data.ms + 200);
  });
});
