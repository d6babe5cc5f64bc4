import { aPlace, aState } from '../testing/narrative.factories';
import { foldNarrative } from './narrative.fold';
import { referee } from './narrative.referee';
import { renderForPrompt } from './narrative.render';
import { parseReply } from './reply.parser';
import type { Canon, NarrativeTurn, StateEvent } from './narrative.types';

const noCanon: Canon = { rules: [], forbiddenStatusChanges: [] };

const turn1: StateEvent[] = [
  { type: 'enter', id: 'harbor', name: 'The Harbor', kind: 'place' },
  { type: 'enter', id: 'mira', name: 'Mira', kind: 'character', status: 'alive', at: 'harbor' },
  { type: 'fact', text: 'Mira is the harbormaster', about: ['mira'] },
];
const turn2: StateEvent[] = [
  { type: 'status', id: 'mira', to: 'wounded' },
  { type: 'enter', id: 'key', name: 'Key', kind: 'item' },
  { type: 'gain', holder: 'player', item: 'key' },
];

describe('foldNarrative', () => {
  it('given no turns, then the state is empty', () => {
    expect(foldNarrative([])).toEqual({ entities: {}, facts: [] });
  });

  it('given turns on a path, then the state is the fold of their accepted events', () => {
    const state = foldNarrative([{ accepted: turn1 }, { accepted: turn2 }]);

    expect(state.entities.mira.status).toBe('wounded');
    expect(state.entities.key.holder).toBe('player');
    expect(state.facts).toEqual([{ text: 'Mira is the harbormaster', about: ['mira'] }]);
  });

  it('given a retcon of an accepted event of an earlier turn, then the state is recomputed without it', () => {
    const state = foldNarrative([
      { accepted: turn1, retconned: [2] },
      { accepted: turn2, retconned: [0] },
    ]);

    expect(state.entities.mira.status).toBe('alive');
    expect(state.facts).toEqual([]);
  });

  it('given a retcon of an enter, then later events about that entity change nothing and the fold does not fail', () => {
    const state = foldNarrative([{ accepted: turn1 }, { accepted: turn2, retconned: [1] }]);

    expect(state.entities).not.toHaveProperty('key');
    expect(state.entities.player).toBeUndefined();
  });

  it('given a correction no longer valid after a retcon, then it is skipped', () => {
    const turns: NarrativeTurn[] = [
      { accepted: turn1, retconned: [1] },
      { accepted: [], corrections: [{ op: 'rename', id: 'mira', name: 'Mira Vey' }] },
    ];

    expect(foldNarrative(turns).entities).not.toHaveProperty('mira');
  });

  it('given a snapshot to start from, then the fold continues from it', () => {
    const snapshot = aState([aPlace('harbor')]);

    expect(
      foldNarrative([{ accepted: [{ type: 'move', id: 'player', to: 'harbor' }] }], snapshot)
        .entities.player.at,
    ).toBe('harbor');
  });

  it('given a correction followed by a turn whose history would have contradicted it, then the prompt shows the corrected state only', () => {
    // Turn 1: the model asserted a fact and a death. The player then corrects both.
    const corrected: NarrativeTurn = {
      accepted: [...turn1, { type: 'status', id: 'mira', to: 'dead' }],
      corrections: [
        { op: 'removeFact', text: 'Mira is the harbormaster' },
        { op: 'setStatus', id: 'mira', status: 'alive' },
      ],
    };
    const afterCorrection = foldNarrative([corrected]);

    // Turn 2: the model narrates on; its block repeats nothing the correction withdrew.
    const reply = parseReply(
      'Mira, alive after all, waves from the pier.\n```state\n{"type":"move","id":"player","to":"harbor"}\n```',
    );
    const verdict = referee(afterCorrection, noCanon, reply.events);
    const prompt = renderForPrompt(foldNarrative([corrected, { accepted: verdict.accepted }]));

    expect(prompt).toContain('- mira: Mira (alive, at harbor)');
    expect(prompt).not.toContain('dead');
    expect(prompt).not.toContain('harbormaster');
    expect(prompt).not.toContain('Facts:');
    // History is prose only: the narration stored for turn 2 carries no block to replay.
    expect(reply.narration).not.toContain('```');
  });
});
