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
    history.turn('say', 'hello', {});
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
