import { aHarborState, aState, anEntity } from '../testing/narrative.factories';
import { InvalidCorrectionError, applyCorrection, applyCorrections } from './narrative.correction';

describe('applyCorrection', () => {
  it('given a rename, then the name changes and the id stays', () => {
    const next = applyCorrection(aHarborState(), { op: 'rename', id: 'mira', name: 'Mira Vey' });

    expect(next.entities.mira).toMatchObject({ id: 'mira', name: 'Mira Vey' });
  });

  it('given a status the canon would forbid, then the player may still set it', () => {
    const state = aState([anEntity('mira', { status: 'dead' })]);

    expect(
      applyCorrection(state, { op: 'setStatus', id: 'mira', status: 'Alive' }).entities.mira.status,
    ).toBe('alive');
  });

  it('given a null status, then the status is cleared', () => {
    expect(
      applyCorrection(aHarborState(), { op: 'setStatus', id: 'mira', status: null }).entities.mira,
    ).not.toHaveProperty('status');
  });

  it('given a move and a set holder, then location and holder are exclusive', () => {
    const moved = applyCorrection(aHarborState(), { op: 'move', id: 'lantern', to: 'harbor' });
    const held = applyCorrection(moved, { op: 'setHolder', item: 'lantern', holder: 'mira' });

    expect(moved.entities.lantern).toMatchObject({ at: 'harbor' });
    expect(moved.entities.lantern).not.toHaveProperty('holder');
    expect(held.entities.lantern).toMatchObject({ holder: 'mira' });
    expect(held.entities.lantern).not.toHaveProperty('at');
  });

  it('given an added entity, then it is in the state; an existing id throws', () => {
    const added = applyCorrection(aHarborState(), {
      op: 'addEntity',
      entity: { id: 'bob', name: 'Bob', kind: 'character', at: 'harbor' },
    });

    expect(added.entities.bob).toEqual({ id: 'bob', name: 'Bob', kind: 'character', at: 'harbor' });
    expect(() =>
      applyCorrection(added, {
        op: 'addEntity',
        entity: { id: 'bob', name: 'B', kind: 'character' },
      }),
    ).toThrow('entity.id "bob" already exists');
  });

  it('given a removed entity, then every reference to it goes too', () => {
    const state = aHarborState();
    state.facts.push({ text: 'The harbor is frozen', about: ['harbor', 'mira'] });

    const next = applyCorrection(state, { op: 'removeEntity', id: 'harbor' });

    expect(next.entities).not.toHaveProperty('harbor');
    expect(next.entities.mira).not.toHaveProperty('at');
    expect(next.facts).toEqual([{ text: 'The harbor is frozen', about: ['mira'] }]);
  });

  it('given an added then removed fact, then the fact is gone; removing a missing fact throws', () => {
    const added = applyCorrection(aHarborState(), {
      op: 'addFact',
      text: 'Mira lies',
      about: ['mira'],
    });
    const removed = applyCorrection(added, { op: 'removeFact', text: '  mira LIES ' });

    expect(added.facts).toEqual([{ text: 'Mira lies', about: ['mira'] }]);
    expect(removed.facts).toEqual([]);
    expect(() => applyCorrection(removed, { op: 'removeFact', text: 'Mira lies' })).toThrow(
      InvalidCorrectionError,
    );
  });

  it('given an unknown id, then it throws InvalidCorrectionError saying which ids are known', () => {
    const attempt = () => applyCorrection(aHarborState(), { op: 'rename', id: 'bob', name: 'Bob' });

    expect(attempt).toThrow(InvalidCorrectionError);
    expect(attempt).toThrow(
      'id "bob" is not in the narrative state; known ids: harbor, lantern, lighthouse, mira.',
    );
  });

  it('given a move to something that is not a place, then it throws', () => {
    expect(() =>
      applyCorrection(aHarborState(), { op: 'move', id: 'mira', to: 'lantern' }),
    ).toThrow('to "lantern" is an item, not a place.');
  });

  it('given an unknown op or a bad id, then it throws with what to fix', () => {
    expect(() => applyCorrection(aHarborState(), { op: 'explode' } as never)).toThrow(
      /unknown correction op "explode"/,
    );
    expect(() =>
      applyCorrection(aHarborState(), { op: 'rename', id: 'Old Mill', name: 'x' }),
    ).toThrow(/lower-case slug/);
  });

  it('given a rename of the implicit player, then the player becomes a stored entity', () => {
    const next = applyCorrection(aState(), { op: 'rename', id: 'player', name: 'Ada' });

    expect(next.entities.player).toEqual({ id: 'player', name: 'Ada', kind: 'character' });
  });

  it('given a list with an invalid correction, then applyCorrections names its position and the input is untouched', () => {
    const state = aHarborState();
    const before = JSON.stringify(state);

    expect(() =>
      applyCorrections(state, [
        { op: 'rename', id: 'mira', name: 'M' },
        { op: 'setStatus', id: 'ghost', status: 'gone' },
      ]),
    ).toThrow(/^correction 2: id "ghost"/);
    expect(JSON.stringify(state)).toBe(before);
  });
});
