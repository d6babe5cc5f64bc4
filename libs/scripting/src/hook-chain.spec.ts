import { runHookChain, type HookRunner } from './hook-chain';
import type { HookRunRequest, HookRunResponse, ScriptDefinition } from './scripting.types';

// A runner that answers from a table by script id: the chain's own rules under test, not the
// sandbox (libs/script-sandbox's specs run real isolates).
function runner(answers: Record<string, (req: HookRunRequest) => HookRunResponse>): HookRunner & {
  seen: HookRunRequest[];
} {
  const seen: HookRunRequest[] = [];
  return {
    seen,
    run: (req) => {
      seen.push(req);
      return Promise.resolve(answers[req.scriptId](req));
    },
  };
}
const script = (id: string, position: number): ScriptDefinition => ({
  id,
  name: `script ${id}`,
  version: 1,
  enabled: true,
  position,
  library: '',
  input: 'modifier(text)',
  context: '',
  output: '',
});
const ok = (
  text: string,
  state: Record<string, unknown>,
  cards: unknown[] = [],
  stop = false,
): HookRunResponse => ({
  outcome: 'ok',
  result: {
    text,
    stop,
    state: JSON.stringify(state),
    storyCards: JSON.stringify(cards),
    logs: [],
    logsDropped: 0,
  },
  ms: 1,
  cpuMs: 1,
});
const base = {
  owner: 'u1',
  hook: 'input' as const,
  text: 'go',
  states: {},
  cards: [],
  history: [],
  info: { actionCount: 1, characterNames: [] },
  memory: { context: '', authorsNote: '' },
  budgetMs: 5000,
  newCardId: () => 'n1',
};

describe('runHookChain (C26)', () => {
  it('given two scripts, then they run in position order, text flows, states stay private, cards are shared', async () => {
    const run = runner({
      a: (req) => ok(`${req.text}A`, { mine: 'a' }, [{ title: 'card' }]),
      b: (req) => ok(`${req.text}B`, { mine: 'b', saw: req.storyCards.length }, req.storyCards),
    });
    const result = await runHookChain(run, { ...base, scripts: [script('b', 2), script('a', 1)] });
    expect(run.seen.map((r) => r.scriptId)).toEqual(['a', 'b']);
    expect(result.text).toBe('goAB');
    expect(result.states).toEqual({ a: { mine: 'a' }, b: { mine: 'b', saw: 1 } });
    expect(result.cardOps).toEqual([
      {
        scriptId: 'a',
        op: { op: 'added', card: expect.objectContaining({ title: 'card' }), index: 0 },
      },
    ]);
  });

  it('given stop in the first, then the second never runs and the message is the stop message', async () => {
    const run = runner({
      a: () => ok('go', { message: 'ok' }, [], true),
      b: () => ok('never', {}),
    });
    const result = await runHookChain(run, { ...base, scripts: [script('a', 1), script('b', 2)] });
    expect(run.seen).toHaveLength(1);
    expect(result).toMatchObject({ stopped: true, stopMessage: 'ok' });
    expect(result.runs[0].outcome).toBe('stopped');
  });

  it('given a throw in the first, then it contributes nothing and the second still acts', async () => {
    const run = runner({
      a: () => ({ outcome: 'failed', error: 'boom', ms: 1, cpuMs: 1 }),
      b: (req) => ok(`${req.text}B`, { n: 1 }),
    });
    const result = await runHookChain(run, { ...base, scripts: [script('a', 1), script('b', 2)] });
    expect(result.text).toBe('goB');
    expect(result.states).toEqual({ b: { n: 1 } });
    expect(result.runs[0]).toMatchObject({ outcome: 'failed', error: 'script a (input): boom' });
  });

  it('given invalid state, then the run is dropped whole (its cards too)', async () => {
    const run = runner({
      a: () => ({
        ...ok('changed', {}, [{ title: 'x' }]),
        result: { ...ok('changed', {}).result!, state: undefined },
      }),
    });
    const result = await runHookChain(run, { ...base, scripts: [script('a', 1)] });
    expect(result).toMatchObject({ text: 'go', cardOps: [], states: {} });
    expect(result.runs[0].outcome).toBe('invalid');
  });

  it('given a spent budget, then later scripts are recorded as timeouts without running', async () => {
    const run = runner({
      a: () => ({ ...ok('goA', {}), ms: 5000 }),
      b: () => ok('never', {}),
    });
    const result = await runHookChain(run, { ...base, scripts: [script('a', 1), script('b', 2)] });
    expect(run.seen).toHaveLength(1);
    expect(result.runs[1]).toMatchObject({ scriptId: 'b', outcome: 'timeout' });
  });

  it('passes each hook at most what is left of the turn budget', async () => {
    const run = runner({ a: () => ok('x', {}) });
    await runHookChain(run, { ...base, budgetMs: 700, scripts: [script('a', 1)] });
    expect(run.seen[0].timeoutMs).toBe(700);
  });
});

// docs/multiplayer.md §3.6: in a room a script sees the characters and the actor, and a
// changed `state.message` may address only the room's characters.
describe('runHookChain in a room', () => {
  const room = {
    ...base,
    info: {
      actionCount: 3,
      characterNames: ['Mira', 'Bo'],
      characters: [{ name: 'Mira' }, { name: 'Bo' }],
      actor: 'Bo',
    },
  };

  it('given a room, when a hook runs, then it is handed info.characters and info.actor', async () => {
    const run = runner({ a: () => ok('go', {}) });
    await runHookChain(run, { ...room, scripts: [script('a', 1)] });
    expect(run.seen[0].info).toMatchObject({
      characters: [{ name: 'Mira' }, { name: 'Bo' }],
      actor: 'Bo',
    });
  });

  it('given a message for Mira, then it is posted with whom it is for', async () => {
    const run = runner({
      a: () => ok('go', { message: { text: 'You hear a click.', visibleTo: ['Mira'] } }),
    });
    const result = await runHookChain(run, { ...room, scripts: [script('a', 1)] });
    expect(result.runs[0].outcome).toBe('ok');
    expect(result.messages).toEqual([
      { scriptId: 'a', message: { text: 'You hear a click.', visibleTo: ['Mira'] } },
    ]);
  });

  it.each([
    [
      { text: 'x', visibleTo: ['Zed'] },
      'state.message.visibleTo names "Zed", not a character here; the characters are "Mira", "Bo"',
    ],
    [
      { text: 'x', visibleTo: 'Mira' },
      'state.message.visibleTo must be an array of character names ("Mira", "Bo")',
    ],
    [
      [
        { text: 'x', visibleTo: ['Mira'] },
        { text: 'y', visibleTo: ['Mira', 7] },
      ],
      'state.message.visibleTo must be an array of character names ("Mira", "Bo")',
    ],
    [
      { visibleTo: ['Mira'] },
      'state.message must be a string, {text, visibleTo: [character names]}, or an array of them',
    ],
    [
      42,
      'state.message must be a string, {text, visibleTo: [character names]}, or an array of them',
    ],
  ])(
    'given the message %j, then the run fails as invalid with %j, nothing posted or kept, and the next script still runs',
    async (message, error) => {
      const run = runner({
        a: () => ok('goA', { message, n: 1 }),
        b: (req) => ok(`${req.text}B`, {}),
      });
      const result = await runHookChain(run, {
        ...room,
        scripts: [script('a', 1), script('b', 2)],
      });
      expect(result.runs[0]).toMatchObject({
        outcome: 'invalid',
        error: `script a (input): ${error}`,
      });
      expect(result.messages).toEqual([]);
      expect(result.states).toEqual({});
      expect(result.text).toBe('goB');
    },
  );

  it('given a bad message that did not change in the run, then the run is not failed for it', async () => {
    const message = { text: 'x', visibleTo: ['Zed'] };
    const run = runner({ a: () => ok('go', { message }) });
    const result = await runHookChain(run, {
      ...room,
      states: { a: { message } },
      scripts: [script('a', 1)],
    });
    expect(result.runs[0].outcome).toBe('ok');
  });

  it('given one player (no info.characters), then any message is posted as before', async () => {
    const run = runner({ a: () => ok('go', { message: { text: 'x', visibleTo: ['Zed'] } }) });
    const result = await runHookChain(run, { ...base, scripts: [script('a', 1)] });
    expect(result.runs[0].outcome).toBe('ok');
    expect(result.messages).toEqual([
      { scriptId: 'a', message: { text: 'x', visibleTo: ['Zed'] } },
    ]);
  });
});
