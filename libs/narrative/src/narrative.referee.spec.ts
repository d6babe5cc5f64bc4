import {
  aCanon,
  aHarborState,
  aPlace,
  aState,
  anEntity,
  anItem,
} from '../testing/narrative.factories';
import { MAX_EVENTS_PER_BLOCK } from './narrative.limits';
import { referee } from './narrative.referee';
import type { StateEvent } from './narrative.types';

const noCanon = aCanon();
const deathIsFinal = aCanon({ forbiddenStatusChanges: [{ from: 'dead', to: 'alive' }] });

describe('referee', () => {
  it('given valid events, when refereed, then all are accepted in order', () => {
    const events: StateEvent[] = [
      { type: 'status', id: 'mira', to: 'wounded' },
      { type: 'move', id: 'mira', to: 'lighthouse' },
      { type: 'fact', text: 'The lamp is out', about: ['lighthouse'] },
    ];

    expect(referee(aHarborState(), noCanon, events)).toEqual({ accepted: events, rejected: [] });
  });

  it('given an enter of an existing id, then it is rejected and the fix offers the id or a new one', () => {
    const { accepted, rejected } = referee(aHarborState(), noCanon, [
      { type: 'enter', id: 'mira', name: 'Mira', kind: 'character' },
    ]);

    expect(accepted).toEqual([]);
    expect(rejected).toEqual([
      {
        line: '{"type":"enter","id":"mira","name":"Mira","kind":"character"}',
        reason: 'id "mira" already exists (Mira, character)',
        fix: 'To change Mira, use status, move, gain or lose with id "mira". If this is someone or something else, enter it with a new id such as "mira-2".',
      },
    ]);
  });

  it('given an unknown id, then the fix lists the known ids sorted and says to enter it first', () => {
    const { rejected } = referee(aHarborState(), noCanon, [
      { type: 'status', id: 'bob', to: 'dead' },
    ]);

    expect(rejected[0].reason).toBe('unknown id "bob"');
    expect(rejected[0].fix).toBe(
      'Use a known id: harbor, lantern, lighthouse, mira, player; or enter "bob" first, on a line before this one, with {"type":"enter","id":"bob","name":"…","kind":"…"}.',
    );
  });

  it('given an unknown id among many known ones, then the fix lists 12 then "and N more"', () => {
    const many = aState(
      Array.from({ length: 20 }, (_, i) => anEntity(`npc-${String(i).padStart(2, '0')}`)),
    );

    const { rejected } = referee(many, noCanon, [{ type: 'status', id: 'bob', to: 'dead' }]);

    expect(rejected[0].fix).toContain(
      'npc-00, npc-01, npc-02, npc-03, npc-04, npc-05, npc-06, npc-07, npc-08, npc-09, npc-10, npc-11 and 9 more;',
    );
  });

  it('given an empty state and an unknown id, then the fix says to enter it first', () => {
    const { rejected } = referee(aState(), noCanon, [{ type: 'move', id: 'bob', to: 'harbor' }]);

    expect(rejected[0].fix).toMatch(/enter "bob" first/);
  });

  it('given a status equal to the current one, then it is ignored: neither accepted nor rejected', () => {
    expect(referee(aHarborState(), noCanon, [{ type: 'status', id: 'mira', to: 'alive' }])).toEqual(
      {
        accepted: [],
        rejected: [],
      },
    );
  });

  it('given a canon-forbidden status change, then it is rejected and the fix quotes the rule', () => {
    const state = aState([anEntity('mira', { status: 'dead' })]);

    const { accepted, rejected } = referee(state, deathIsFinal, [
      { type: 'status', id: 'mira', to: 'alive' },
    ]);

    expect(accepted).toEqual([]);
    expect(rejected[0].reason).toBe('canon forbids "dead" → "alive" for "mira"');
    expect(rejected[0].fix).toContain('"Nothing that is dead can become alive."');
  });

  it('given canon written in another case, then the comparison ignores case', () => {
    const canon = aCanon({ forbiddenStatusChanges: [{ from: 'Dead', to: 'ALIVE' }] });
    const state = aState([anEntity('mira', { status: 'dead' })]);

    const { rejected } = referee(state, canon, [{ type: 'status', id: 'mira', to: 'Alive' }]);

    expect(rejected).toHaveLength(1);
    expect(rejected[0].fix).toContain('"Nothing that is Dead can become ALIVE."');
  });

  it('given a status change canon does not forbid, then it is accepted', () => {
    const state = aState([anEntity('mira', { status: 'dead' })]);

    expect(
      referee(state, deathIsFinal, [{ type: 'status', id: 'mira', to: 'buried' }]).accepted,
    ).toHaveLength(1);
  });

  it('given a move to something that is not a place, then it is rejected with the places listed', () => {
    const { rejected } = referee(aHarborState(), noCanon, [
      { type: 'move', id: 'lantern', to: 'mira' },
    ]);

    expect(rejected[0].reason).toBe('"to" must be a place; "mira" is a character');
    expect(rejected[0].fix).toMatch(/^Use a place: harbor, lighthouse;/);
  });

  it('given a move to an unknown place, then the fix lists only the places', () => {
    const { rejected } = referee(aHarborState(), noCanon, [
      { type: 'move', id: 'mira', to: 'cave' },
    ]);

    expect(rejected[0].reason).toBe('unknown "to" "cave"');
    expect(rejected[0].fix).toMatch(
      /^Use a known place id: harbor, lighthouse; or enter "cave" first/,
    );
  });

  it('given a move of a place, then it is rejected', () => {
    const { rejected } = referee(aHarborState(), noCanon, [
      { type: 'move', id: 'harbor', to: 'lighthouse' },
    ]);

    expect(rejected[0].reason).toBe('"harbor" is a place and cannot move');
  });

  it('given a lose of an item the holder does not hold, then it is rejected naming the real holder', () => {
    const state = aState([anEntity('mira'), anItem('key', { holder: 'mira' })]);

    const { rejected } = referee(state, noCanon, [{ type: 'lose', holder: 'player', item: 'key' }]);

    expect(rejected[0].reason).toBe('"key" is not held by "player"');
    expect(rejected[0].fix).toContain('It is held by "mira"');
  });

  it('given a lose of an item nobody holds, then the fix says to leave it out', () => {
    const state = aState([anItem('key')]);

    const { rejected } = referee(state, noCanon, [{ type: 'lose', holder: 'player', item: 'key' }]);

    expect(rejected[0].fix).toMatch(/^Nobody holds "key"/);
  });

  it('given an empty state, then player is still a known holder', () => {
    const events: StateEvent[] = [
      { type: 'enter', id: 'key', name: 'Key', kind: 'item' },
      { type: 'gain', holder: 'player', item: 'key' },
      { type: 'lose', holder: 'player', item: 'key' },
    ];

    expect(referee(aState(), noCanon, events)).toEqual({ accepted: events, rejected: [] });
  });

  it('given events that depend on earlier events of the same block, then each sees the state after those', () => {
    const events: StateEvent[] = [
      { type: 'enter', id: 'cave', name: 'Cave', kind: 'place' },
      { type: 'enter', id: 'bob', name: 'Bob', kind: 'character', at: 'cave' },
      { type: 'status', id: 'bob', to: 'dead' },
      { type: 'status', id: 'bob', to: 'alive' },
      { type: 'enter', id: 'bob', name: 'Bob again', kind: 'character' },
    ];

    const { accepted, rejected } = referee(aState(), deathIsFinal, events);

    expect(accepted).toEqual(events.slice(0, 3));
    expect(rejected.map((r) => r.reason)).toEqual([
      'canon forbids "dead" → "alive" for "bob"',
      'id "bob" already exists (Bob, character)',
    ]);
  });

  it('given an event before the enter it depends on, then it is rejected and the enter accepted', () => {
    const { accepted, rejected } = referee(aState(), noCanon, [
      { type: 'status', id: 'bob', to: 'wounded' },
      { type: 'enter', id: 'bob', name: 'Bob', kind: 'character' },
    ]);

    expect(accepted).toHaveLength(1);
    expect(rejected[0].reason).toBe('unknown id "bob"');
  });

  it('given an enter at something that is not a place, then it is rejected', () => {
    const { rejected } = referee(aHarborState(), noCanon, [
      { type: 'enter', id: 'bob', name: 'Bob', kind: 'character', at: 'mira' },
    ]);

    expect(rejected[0].reason).toBe('"at" must be a place; "mira" is a character');
  });

  it('given a gain of an item already held by that holder, then it is ignored; by another holder, it is a hand-over', () => {
    const { accepted, rejected } = referee(aHarborState(), noCanon, [
      { type: 'gain', holder: 'player', item: 'lantern' },
      { type: 'gain', holder: 'mira', item: 'lantern' },
    ]);

    expect(accepted).toEqual([{ type: 'gain', holder: 'mira', item: 'lantern' }]);
    expect(rejected).toEqual([]);
  });

  it('given a gain by a place or of a place, then it is rejected', () => {
    const { rejected } = referee(aHarborState(), noCanon, [
      { type: 'gain', holder: 'harbor', item: 'lantern' },
      { type: 'gain', holder: 'player', item: 'lighthouse' },
    ]);

    expect(rejected.map((r) => r.reason)).toEqual([
      'holder "harbor" is a place',
      '"lighthouse" cannot be held by "player"',
    ]);
  });

  it('given a fact about an unknown id, then it is rejected; a repeated fact is ignored', () => {
    const state = aState([aPlace('harbor')], ['The harbor is frozen']);

    const verdict = referee(state, noCanon, [
      { type: 'fact', text: 'Bob hates the cold', about: ['bob'] },
      { type: 'fact', text: 'the harbor is frozen' },
    ]);

    expect(verdict.accepted).toEqual([]);
    expect(verdict.rejected.map((r) => r.reason)).toEqual(['unknown "about" "bob"']);
  });

  it('given malformed values handed straight to the referee, then each is rejected, never thrown', () => {
    const { accepted, rejected } = referee(aHarborState(), noCanon, [
      null,
      'text',
      { type: 'status', id: 'mira' },
      { type: 'move', id: 'mira', to: 42 },
    ]);

    expect(accepted).toEqual([]);
    expect(rejected).toHaveLength(4);
  });

  it(`given more than ${MAX_EVENTS_PER_BLOCK} events, then the rest is one rejection`, () => {
    const events = Array.from({ length: 70 }, (_, i) => ({ type: 'fact', text: `fact ${i}` }));

    const { accepted, rejected } = referee(aState(), noCanon, events);

    expect(accepted).toHaveLength(MAX_EVENTS_PER_BLOCK);
    expect(rejected).toHaveLength(1);
    expect(rejected[0].reason).toMatch(/6 more not applied/);
  });

  it('given the input state, then the referee does not mutate it', () => {
    const state = aHarborState();
    const before = JSON.stringify(state);

    referee(state, noCanon, [
      { type: 'move', id: 'mira', to: 'lighthouse' },
      { type: 'gain', holder: 'mira', item: 'lantern' },
    ]);

    expect(JSON.stringify(state)).toBe(before);
  });
});
