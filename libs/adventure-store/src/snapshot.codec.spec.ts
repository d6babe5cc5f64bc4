import { AdventureHistory, canonicalJson, playedAdventure } from '@chronicle/adventure';
import { decodeSnapshot, encodeSnapshot, SNAPSHOT_CODEC } from './snapshot.codec';

function roundTrip(history: AdventureHistory): void {
  const state = history.state;
  // Through JSON, as the snapshots table stores it.
  const stored = JSON.parse(JSON.stringify(encodeSnapshot(state)));
  expect(canonicalJson(decodeSnapshot(stored))).toBe(canonicalJson(state));
}

describe('snapshot codec', () => {
  it('given a tree with takes, branches, undo, edits, erases and corrections, when encoded and decoded, then the state is canonically the same', () => {
    const history = AdventureHistory.create();
    const first = history.turn('do', 'walk north', {
      accepted: [{ type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' }],
    });
    history.retry({ accepted: [{ type: 'status', id: 'mira', to: 'tired' }] });
    const second = history.turn('say', 'hello', {
      accepted: [
        { type: 'status', id: 'mira', to: 'tired' },
        { type: 'move', id: 'mira', to: 'tower' },
      ],
      rejected: [{ line: 'mira flies', reason: 'no such power', fix: 'walk instead' }],
    });
    history.retcon(second.aiActionId, 1);
    history.undo();
    roundTrip(history);
    history.moveHead(first.aiActionId);
    history.turn('do', 'branch off', {});
    history.edit(first.playerActionId ?? '', 'walk south');
    history.correct({ op: 'setStatus', id: 'mira', status: 'alive' });
    history.erase(first.aiActionId);
    roundTrip(history);
    history.act('continue');
    roundTrip(history);
  });

  it('given a long adventure, when encoded, then the path is left out and the snapshot is smaller', () => {
    const history = playedAdventure(200, 100);
    const lean = encodeSnapshot(history.state);
    expect(lean.path).toBeNull();
    expect(JSON.stringify(lean).length).toBeLessThan(JSON.stringify(history.state).length * 0.6);
    roundTrip(history);
  });

  it('given narrations that repeat state events, when encoded, then each distinct event is written once and every node gets its own block back', () => {
    const history = AdventureHistory.create();
    const tired = { type: 'status', id: 'mira', to: 'tired' } as const;
    const enter = {
      type: 'enter',
      id: 'mira',
      name: 'Mira',
      kind: 'character',
      status: 'alive',
    } as const;
    const a = history.turn('do', 'one', { accepted: [enter] });
    const b = history.turn('do', 'two', { accepted: [tired] });
    const c = history.turn('do', 'three', { accepted: [{ ...tired }] });
    const lean = encodeSnapshot(history.state);
    expect(lean.stateEvents).toEqual([enter, tired]);
    const decoded = decodeSnapshot(JSON.parse(JSON.stringify(lean)));
    expect(decoded?.nodes[a.aiActionId].accepted).toEqual([enter]);
    expect(decoded?.nodes[b.aiActionId].accepted).toEqual([tired]);
    expect(decoded?.nodes[c.aiActionId].accepted).toEqual([tired]);
    expect(decoded?.nodes[b.aiActionId].accepted).not.toBe(decoded?.nodes[c.aiActionId].accepted);
  });

  it('given a node without lists, when decoded, then its empty lists cannot be changed in place', () => {
    const history = AdventureHistory.create();
    const { playerActionId } = history.turn('do', 'walk', {});
    const decoded = decodeSnapshot(JSON.parse(JSON.stringify(encodeSnapshot(history.state))));
    const node = decoded?.nodes[playerActionId ?? ''];
    expect(node?.corrections).toEqual([]);
    expect(() => (node?.corrections as unknown[]).push('leak')).toThrow(TypeError);
  });

  it('keeps depths that are not the parent chain as they are', () => {
    const history = AdventureHistory.create();
    const { aiActionId } = history.turn('do', 'walk', {});
    const state = history.state;
    const odd = {
      ...state,
      nodes: { ...state.nodes, [aiActionId]: { ...state.nodes[aiActionId], depth: 7 } },
    };
    const lean = encodeSnapshot(odd);
    expect(lean.depths).not.toBeNull();
    expect(decodeSnapshot(JSON.parse(JSON.stringify(lean)))?.nodes[aiActionId].depth).toBe(7);
    expect(encodeSnapshot(state).depths).toBeNull();
  });

  it('keeps a path that is not the head chain as it is', () => {
    const state = AdventureHistory.create().state;
    const odd = { ...state, path: [] };
    const lean = encodeSnapshot(odd);
    expect(lean.path).toEqual([]);
    expect(canonicalJson(decodeSnapshot(JSON.parse(JSON.stringify(lean))))).toBe(
      canonicalJson(odd),
    );
  });

  it('reads only its own codec: a whole state or another codec is no snapshot', () => {
    const state = AdventureHistory.create().state;
    expect(decodeSnapshot(state)).toBeNull();
    expect(decodeSnapshot({ ...encodeSnapshot(state), codec: SNAPSHOT_CODEC + 1 })).toBeNull();
    expect(decodeSnapshot(null)).toBeNull();
  });
});
