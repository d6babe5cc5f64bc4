import {
  canonicalJson,
  nodeBucket,
  requireNode,
  type ActionNode,
  type AdventureState,
} from '@chronicle/adventure';
import { AdventureHistory, playedAdventure } from '@chronicle/adventure/testing';
import { decodeSnapshot, encodeSnapshot, SNAPSHOT_CODEC, unpackSnapshot } from './snapshot.codec';

/** `state` with one node changed (as no projector would: these states are hand-made). */
function withNodeChanged(state: AdventureState, id: string, change: Partial<ActionNode>) {
  const nodes = state.nodes.slice();
  const bucket = nodeBucket(id);
  nodes[bucket] = { ...nodes[bucket], [id]: { ...requireNode(state, id), ...change } };
  return { ...state, nodes };
}

function roundTrip(history: AdventureHistory): void {
  const state = history.state;
  expect(canonicalJson(decodeSnapshot(encodeSnapshot(state)))).toBe(canonicalJson(state));
}

describe('snapshot codec', () => {
  it('given a tree with takes, branches, undo, edits, erases and corrections, when encoded and decoded, then the state is canonically the same', () => {
    const history = AdventureHistory.create();
    const first = history.turn('do', 'walk north', {
      reported: [{ type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' }],
    });
    // The retry starts from the state before the first take: Mira enters again.
    history.retry({
      reported: [
        { type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive' },
        { type: 'status', id: 'mira', to: 'tired' },
      ],
    });
    const second = history.turn('say', 'hello', {
      reported: [
        { type: 'enter', id: 'tower', name: 'Tower', kind: 'place' },
        { type: 'move', id: 'mira', to: 'tower' },
        'mira flies',
      ],
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
    const bytes = encodeSnapshot(history.state);
    expect(unpackSnapshot(bytes)?.path).toBeNull();
    expect(bytes.byteLength).toBeLessThan(JSON.stringify(history.state).length * 0.6);
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
    const a = history.turn('do', 'one', { reported: [enter] });
    const b = history.turn('do', 'two', { reported: [tired] });
    // Rested between the two: the referee drops a status change that changes nothing.
    history.turn('do', 'rest', { reported: [{ type: 'status', id: 'mira', to: 'alive' }] });
    const c = history.turn('do', 'three', { reported: [{ ...tired }] });
    const bytes = encodeSnapshot(history.state);
    expect(unpackSnapshot(bytes)?.stateEvents).toEqual([
      enter,
      tired,
      { type: 'status', id: 'mira', to: 'alive' },
    ]);
    const decoded = decodeSnapshot(bytes);
    expect(requireNode(decoded as AdventureState, a.aiActionId).accepted).toEqual([enter]);
    expect(requireNode(decoded as AdventureState, b.aiActionId).accepted).toEqual([tired]);
    expect(requireNode(decoded as AdventureState, c.aiActionId).accepted).toEqual([tired]);
    expect(requireNode(decoded as AdventureState, b.aiActionId).accepted).not.toBe(
      requireNode(decoded as AdventureState, c.aiActionId).accepted,
    );
  });

  it('given a node without lists, when decoded, then its empty lists cannot be changed in place', () => {
    const history = AdventureHistory.create();
    const { playerActionId } = history.turn('do', 'walk', {});
    const decoded = decodeSnapshot(encodeSnapshot(history.state));
    const node = requireNode(decoded as AdventureState, playerActionId ?? '');
    expect(node?.corrections).toEqual([]);
    expect(() => (node?.corrections as unknown[]).push('leak')).toThrow(TypeError);
  });

  it('keeps depths that are not the parent chain as they are', () => {
    const history = AdventureHistory.create();
    const { aiActionId } = history.turn('do', 'walk', {});
    const state = history.state;
    const odd = withNodeChanged(state, aiActionId, { depth: 7 });
    const bytes = encodeSnapshot(odd);
    expect(unpackSnapshot(bytes)?.depths).not.toBeNull();
    expect(requireNode(decodeSnapshot(bytes) as AdventureState, aiActionId).depth).toBe(7);
    expect(unpackSnapshot(encodeSnapshot(state))?.depths).toBeNull();
  });

  it('keeps a path that is not the head chain as it is', () => {
    const state = AdventureHistory.create().state;
    const odd = { ...state, path: [] };
    const bytes = encodeSnapshot(odd);
    expect(unpackSnapshot(bytes)?.path).toEqual([]);
    expect(canonicalJson(decodeSnapshot(bytes))).toBe(canonicalJson(odd));
  });

  it('reads only its own codec: a whole state, codec 3 JSON or another codec is no snapshot', () => {
    const state = AdventureHistory.create().state;
    expect(decodeSnapshot(Buffer.from(JSON.stringify(state)))).toBeNull();
    expect(decodeSnapshot(Buffer.from(JSON.stringify({ codec: 3, state, ids: [] })))).toBeNull();
    const other = encodeSnapshot(state);
    new Uint32Array(other.buffer, other.byteOffset, 1)[0] = SNAPSHOT_CODEC + 1;
    expect(decodeSnapshot(other)).toBeNull();
    expect(decodeSnapshot(new Uint8Array(0))).toBeNull();
  });

  it('given snapshot bytes at any offset in their buffer, when decoded, then the state is the same', () => {
    const history = playedAdventure(40, 100);
    const bytes = encodeSnapshot(history.state);
    // A driver may hand the bytes over as a slice of a larger buffer, at an odd offset.
    const larger = Buffer.alloc(bytes.byteLength + 3);
    larger.set(bytes, 3);
    expect(canonicalJson(decodeSnapshot(larger.subarray(3)))).toBe(canonicalJson(history.state));
  });

  it('given columns whose values need one, two or four bytes, then each keeps its values', () => {
    const history = AdventureHistory.create();
    const { aiActionId } = history.turn('do', 'walk', {});
    const state = history.state;
    const wide = withNodeChanged(state, aiActionId, { tokens: 40_000, textVersion: 3_000_000 });
    expect(
      requireNode(decodeSnapshot(encodeSnapshot(wide)) as AdventureState, aiActionId),
    ).toMatchObject({
      tokens: 40_000,
      textVersion: 3_000_000,
    });
    const fractional = withNodeChanged(state, aiActionId, { tokens: 1.5 });
    expect(() => encodeSnapshot(fractional)).toThrow(/tokens holds 1.5/);
  });
});
