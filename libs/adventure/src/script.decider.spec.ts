import {
  ConflictError,
  InvalidCommandError,
  LimitExceededError,
  NotFoundError,
} from './adventure.errors';
import { decide } from './adventure.decider';
import { LIMITS } from './adventure.limits';
import {
  decideScript,
  storableText,
  type ScriptCommand,
  type ScriptedInput,
} from './script.decider';
import { scriptStateAtHead } from './script.projector';
import { AdventureHistory, wordCountTokens } from './testing';

const dice = { id: 's-dice', name: 'Dice', input: 'modifier(text)' };
const added = (over: Record<string, unknown> = {}) => ({
  type: 'ScriptAdded',
  data: {
    script: {
      id: 's-dice',
      name: 'Dice',
      library: '',
      input: 'modifier(text)',
      context: '',
      output: '',
      enabled: true,
      version: 1,
      ...over,
    },
  },
});

function withScripts(...scripts: { id: string; name: string }[]) {
  const history = AdventureHistory.create();
  for (const script of scripts)
    history.append(...decideScript({ type: 'AddScript', data: { script } }, history.state));
  return history;
}
const when = (history: AdventureHistory, command: ScriptCommand) => () =>
  decideScript(command, history.state);

describe('decideScript', () => {
  it('given an adventure, when a script is added, then ScriptAdded at version 1 with empty tabs filled', () => {
    expect(
      when(AdventureHistory.create(), { type: 'AddScript', data: { script: dice } })(),
    ).toEqual([added()]);
  });

  it('given a scenario with scripts, when created, then the scripts follow AdventureCreated in order', () => {
    const history = AdventureHistory.create({ scripts: [dice, { id: 's-2', name: 'Two' }] });
    expect(history.events.map((e) => e.type)).toEqual([
      'AdventureCreated',
      'ScriptAdded',
      'ScriptAdded',
    ]);
    expect(history.state.scripts.map((s) => s.id)).toEqual(['s-dice', 's-2']);
  });

  it('refuses a Library over 4 MiB (422), a missing name (400), a taken id (409)', () => {
    const history = withScripts(dice);
    expect(
      when(history, {
        type: 'AddScript',
        data: { script: { id: 'big', name: 'Big', library: 'x'.repeat(4 * 1024 * 1024 + 1) } },
      }),
    ).toThrow(LimitExceededError);
    expect(when(history, { type: 'AddScript', data: { script: { id: 'n', name: ' ' } } })).toThrow(
      InvalidCommandError,
    );
    expect(when(history, { type: 'AddScript', data: { script: dice } })).toThrow(ConflictError);
  });

  it('given a script, when edited, then only the changed fields, and the projection bumps its version', () => {
    const history = withScripts(dice);
    const events = when(history, {
      type: 'EditScript',
      data: { scriptId: 's-dice', changes: { name: 'Dice', output: 'void 0' } },
    })();
    expect(events).toEqual([
      { type: 'ScriptEdited', data: { scriptId: 's-dice', changes: { output: 'void 0' } } },
    ]);
    history.append(...events);
    expect(history.state.scripts[0]).toMatchObject({ output: 'void 0', version: 2 });
    expect(
      when(history, {
        type: 'EditScript',
        data: { scriptId: 's-dice', changes: { name: 'Dice' } },
      })(),
    ).toEqual([]);
  });

  it('removes a script, and an unknown one is 404', () => {
    const history = withScripts(dice);
    history.append(...when(history, { type: 'RemoveScript', data: { scriptId: 's-dice' } })());
    expect(history.state.scripts).toEqual([]);
    expect(when(history, { type: 'RemoveScript', data: { scriptId: 's-dice' } })).toThrow(
      NotFoundError,
    );
  });

  it('reorders by a permutation of every id, and refuses anything else', () => {
    const history = withScripts({ id: 'a', name: 'A' }, { id: 'b', name: 'B' });
    history.append(...when(history, { type: 'ReorderScripts', data: { ids: ['b', 'a'] } })());
    expect(history.state.scripts.map((s) => s.id)).toEqual(['b', 'a']);
    for (const ids of [['a'], ['a', 'a'], ['a', 'c'], ['a', 'b', 'c']]) {
      expect(when(history, { type: 'ReorderScripts', data: { ids } })).toThrow(InvalidCommandError);
    }
  });
});

describe('SubmitAction after onInput (scriptedSubmit)', () => {
  const scripted = (over: Partial<ScriptedInput> = {}): ScriptedInput => ({
    text: '> You climb.!',
    stopped: false,
    stopMessage: '',
    stoppedBy: null,
    runs: [
      {
        scriptId: 's-dice',
        hook: 'input',
        outcome: 'ok',
        textChanged: true,
        ms: 1,
        cpuMs: 1,
        logs: ['a'],
      },
    ],
    states: { 's-dice': { n: 1 } },
    cardOps: [],
    messages: [],
    ...over,
  });
  const submit = (script: ScriptedInput) => ({
    type: 'SubmitAction' as const,
    data: { turnId: 't1', inputType: 'do' as const, text: 'climb', actionId: 'a1', script },
  });

  it("given a changed text, then PlayerActed stores the script's text, the typed one beside it, and the effects follow", () => {
    const history = withScripts(dice);
    const events = decide(submit(scripted()), history.state, wordCountTokens);
    expect(events.map((e) => e.type)).toEqual([
      'PlayerActed',
      'ScriptHookRan',
      'ScriptStateChanged',
    ]);
    expect(events[0].data).toMatchObject({
      action: { id: 'a1', text: '> You climb.!', tokens: 3 },
      typedText: '> You climb.',
    });
    expect(events[2].data).toEqual({ scriptId: 's-dice', actionId: 'a1', state: { n: 1 } });
    history.append(...events);
    expect(scriptStateAtHead(history.state, 's-dice')).toEqual({ n: 1 });
  });

  it('given a stop, then no PlayerActed: TurnStoppedByScript, the state on the head, the turn not in flight', () => {
    const history = withScripts(dice);
    const head = history.head;
    const events = decide(
      submit(scripted({ stopped: true, stopMessage: 'ok', stoppedBy: 's-dice', text: '' })),
      history.state,
      wordCountTokens,
    );
    expect(events.map((e) => e.type)).toEqual([
      'TurnStoppedByScript',
      'ScriptHookRan',
      'ScriptStateChanged',
    ]);
    expect(events[2].data).toMatchObject({ actionId: head });
    history.append(...events);
    expect(history.state.inFlight).toBeNull();
    expect(history.state.recentTurns.at(-1)).toMatchObject({
      turnId: 't1',
      status: 'stopped',
      error: 'ok',
    });
  });

  it('makes script text storable (NUL, lone surrogates) and keeps cards within the adventure limit', () => {
    expect(storableText('a\u0000b\ud800c', 10)).toBe('ab\ufffdc');
    const history = withScripts(dice);
    const cardOps = Array.from({ length: LIMITS.storyCardsPerAdventure + 5 }, (_, i) => ({
      scriptId: 's-dice',
      op: {
        op: 'added' as const,
        index: i,
        card: {
          id: `c${i}`,
          title: 't'.repeat(300),
          keys: 'k',
          type: 'Custom',
          entry: 'e',
          description: '',
        },
      },
    }));
    const events = decide(submit(scripted({ cardOps })), history.state, wordCountTokens);
    const added = events.filter((e) => e.type === 'StoryCardAdded');
    expect(added).toHaveLength(LIMITS.storyCardsPerAdventure - history.state.cards.length);
    expect((added[0].data as { card: { name: string } }).card.name).toHaveLength(200);
  });
});
