import {
  ConflictError,
  InvalidCommandError,
  LimitExceededError,
  NotFoundError,
} from './adventure.errors';
import { decideScript, type ScriptCommand } from './script.decider';
import { AdventureHistory } from './testing';

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
