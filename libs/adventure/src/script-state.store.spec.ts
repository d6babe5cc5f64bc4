import { project } from './adventure.projector';
import { scriptStateAtHead } from './script.projector';
import {
  KEYFRAME_EVERY,
  applyPatch,
  diffState,
  newStateRecord,
  resolveRecord,
  type ScriptStateRecord,
} from './script-state.store';
import { AdventureHistory } from './testing/adventure.factory';

const roundTrip = (from: Record<string, unknown>, to: Record<string, unknown>) =>
  applyPatch(JSON.parse(JSON.stringify(from)), diffState(from, to));

describe('diffState and applyPatch', () => {
  it.each([
    [{}, { a: 1 }],
    [
      { a: 1, b: { c: [1, 2, 3], d: 'x' } },
      { a: 2, b: { c: [1, 2], d: 'x', e: null } },
    ],
    [{ list: [1, 2] }, { list: [1, 2, { deep: true }] }],
    [{ list: [{ n: 1 }, { n: 2 }] }, { list: [{ n: 1 }, { n: 3, m: [] }] }],
    [{ a: { b: 1 } }, { a: [1] }],
    [{ a: [1] }, { a: 'text' }],
    [{ window: [1, 2, 3, 4] }, { window: [2, 3, 4, 5] }],
    [{ window: [1, 2, 3, 4] }, { window: [3, 4] }],
    [{ window: [1, 2, 3] }, { window: [2, 3, 4, 5, 6] }],
    [{ window: [[1], [2]] }, { window: [[2], [3]] }],
    [{ gone: { deep: 1 }, kept: 1 }, { kept: 1 }],
    [JSON.parse('{"__proto__": {"x": 1}}'), JSON.parse('{"__proto__": {"x": 2}, "y": 1}')],
  ])('turns %j into %j', (from, to) => {
    expect(roundTrip(from, to)).toEqual(to);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('a rolling window is two splices, not a rewrite of every item', () => {
    const titles = Array.from({ length: 20 }, (_, i) => `Card ${i}`);
    expect(diffState({ titles }, { titles: [...titles.slice(1), 'Card 20'] })).toEqual([
      [['titles'], 0, 1, []],
      [['titles'], 19, 0, ['Card 20']],
    ]);
  });

  it('a small change is a small patch', () => {
    const big = { AutoCards: { config: 'x'.repeat(3000), turn: 1, titles: ['a', 'b'] } };
    const next = { AutoCards: { ...big.AutoCards, turn: 2, titles: ['a', 'b', 'c'] } };
    expect(diffState(big, next)).toEqual([
      [['AutoCards', 'turn'], 2],
      [['AutoCards', 'titles', '2'], 'c'],
    ]);
  });
});

describe('state records', () => {
  it('patch a chain and keep a whole state every KEYFRAME_EVERY records', () => {
    const records: Record<string, ScriptStateRecord> = {};
    let prev: string | null = null;
    const big = 'y'.repeat(2000);
    for (let i = 0; i < 40; i++) {
      const id = `r${i}`;
      records[id] = newStateRecord(records, prev, { big, turn: i });
      expect(resolveRecord(records, id)).toEqual({ big, turn: i });
      expect(records[id].chain).toBeLessThan(KEYFRAME_EVERY);
      prev = id;
    }
    const whole = Object.values(records).filter((r) => r.prev === null);
    expect(whole).toHaveLength(Math.ceil(40 / KEYFRAME_EVERY));
  });

  it('a resolved state is a copy: changing it changes no record', () => {
    const records: Record<string, ScriptStateRecord> = {};
    records.a = newStateRecord(records, null, { n: { deep: 1 } });
    const resolved = resolveRecord(records, 'a') as { n: { deep: number } };
    resolved.n.deep = 9;
    expect(resolveRecord(records, 'a')).toEqual({ n: { deep: 1 } });
  });
});

describe('script state along the story tree', () => {
  function scripted(): AdventureHistory {
    const history = AdventureHistory.create();
    history.run({ type: 'AddScript', data: { script: { id: 's1', name: 'counter' } } });
    return history;
  }
  const setState = (history: AdventureHistory, state: Record<string, unknown>) =>
    history.append({
      type: 'ScriptStateChanged',
      data: { scriptId: 's1', actionId: history.head, state },
    });
  const big = 'z'.repeat(4000);

  it('follows the head through undo and a branch, with records replaced at a node', () => {
    const history = scripted();
    history.turn('do', 'one');
    setState(history, { big, n: 1 });
    const branchPoint = history.head;
    history.turn('do', 'two');
    setState(history, { big, n: 2 });
    const tip = history.head;
    history.turn('do', 'three');
    setState(history, { big, n: 3 });
    // Back at the branch point, a stop there replaces its record: the later nodes keep theirs.
    history.moveHead(branchPoint);
    setState(history, { big, n: 10 });
    expect(scriptStateAtHead(history.state, 's1')).toEqual({ big, n: 10 });
    history.moveHead(tip);
    expect(scriptStateAtHead(history.state, 's1')).toEqual({ big, n: 2 });
    // A fold from scratch (a replay, a snapshot's JSON) reads the same.
    const replayed = JSON.parse(JSON.stringify(project(history.events)));
    expect(scriptStateAtHead(replayed, 's1')).toEqual({ big, n: 2 });
  });

  it('a state a caller holds does not change when the fold goes on', () => {
    const history = scripted();
    history.turn('do', 'one');
    setState(history, { n: 1 });
    const held = history.state;
    const records = JSON.stringify(held.scriptStateRecords);
    history.turn('do', 'two');
    setState(history, { n: 2 });
    expect(JSON.stringify(held.scriptStateRecords)).toBe(records);
    expect(scriptStateAtHead(held, 's1')).toEqual({ n: 1 });
  });

  it('grows with the changes, not with the nodes × the state', () => {
    const history = scripted();
    for (let i = 0; i < 200; i++) {
      history.turn('do', `turn ${i}`);
      setState(history, { big, n: i });
    }
    const stored = JSON.stringify(history.state.scriptStateRecords).length;
    // Whole copies would be 200 × 4 KB; keyframes every 16 records and small patches between.
    expect(stored).toBeLessThan((200 / KEYFRAME_EVERY + 1) * 4100 + 200 * 100);
    expect(stored).toBeLessThan(200 * 4000 * 0.1);
    expect(scriptStateAtHead(history.state, 's1')).toEqual({ big, n: 199 });
  });
});
