import { aHarborState, aState, anItem } from '../testing/narrative.factories';
import { evolve, initialNarrativeState } from './narrative.state';

describe('evolve', () => {
  it('given the initial state, then it is empty', () => {
    expect(initialNarrativeState()).toEqual({ entities: {}, facts: [] });
  });

  it('given an enter, then the entity is added with its fields and the input is not mutated', () => {
    const state = aHarborState();
    const before = JSON.stringify(state);

    const next = evolve(state, {
      type: 'enter',
      id: 'bob',
      name: 'Bob',
      kind: 'character',
      status: 'alive',
      at: 'harbor',
      desc: 'A sailor',
    });

    expect(next.entities.bob).toEqual({
      id: 'bob',
      name: 'Bob',
      kind: 'character',
      status: 'alive',
      at: 'harbor',
      desc: 'A sailor',
    });
    expect(JSON.stringify(state)).toBe(before);
  });

  it('given a move of a held item, then it is at the place and no longer held', () => {
    const next = evolve(aHarborState(), { type: 'move', id: 'lantern', to: 'lighthouse' });

    expect(next.entities.lantern).toEqual({
      id: 'lantern',
      name: 'Lantern',
      kind: 'item',
      at: 'lighthouse',
    });
  });

  it('given a gain of an item lying somewhere, then it is held and no longer at the place', () => {
    const state = aState([anItem('key', { at: 'harbor' })]);

    expect(evolve(state, { type: 'gain', holder: 'player', item: 'key' }).entities.key).toEqual({
      id: 'key',
      name: 'Key',
      kind: 'item',
      holder: 'player',
    });
  });

  it('given a lose by the holder, then nobody holds the item', () => {
    const next = evolve(aHarborState(), { type: 'lose', holder: 'player', item: 'lantern' });

    expect(next.entities.lantern.holder).toBeUndefined();
  });

  it('given a status or move of the player before it entered, then the implicit player becomes an entity', () => {
    const next = evolve(aHarborState(), { type: 'move', id: 'player', to: 'harbor' });

    expect(next.entities.player).toEqual({
      id: 'player',
      name: 'Player',
      kind: 'character',
      at: 'harbor',
    });
  });

  it('given facts, then they keep their order and a repeat is not added twice', () => {
    let state = initialNarrativeState();
    state = evolve(state, { type: 'fact', text: 'B came first' });
    state = evolve(state, { type: 'fact', text: 'A came second', about: ['mira'] });
    state = evolve(state, { type: 'fact', text: 'b came FIRST' });

    expect(state.facts).toEqual([
      { text: 'B came first' },
      { text: 'A came second', about: ['mira'] },
    ]);
  });

  it('given an event whose subject no longer exists (withdrawn), then the state is unchanged', () => {
    const state = aHarborState();

    expect(evolve(state, { type: 'status', id: 'bob', to: 'dead' })).toBe(state);
    expect(evolve(state, { type: 'move', id: 'mira', to: 'cave' })).toBe(state);
    expect(evolve(state, { type: 'gain', holder: 'bob', item: 'lantern' })).toBe(state);
  });
});
