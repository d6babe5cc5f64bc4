import {
  aCanon,
  aHarborState,
  aPlace,
  aState,
  anEntity,
  anItem,
} from '../testing/narrative.factories';
import { renderCanon } from './narrative.canon';
import { renderForPrompt, renderRejections } from './narrative.render';
import type { Rejection } from './narrative.types';

describe('renderForPrompt', () => {
  it('given an empty state, then it renders nothing (no section)', () => {
    expect(renderForPrompt(aState())).toBe('');
  });

  it('given a state, then it renders grouped by kind, sorted by id, in fixed wording', () => {
    const state = aHarborState();
    state.entities.mira.desc = 'A fisher';
    state.facts.push({ text: 'The lamp is out' });

    expect(renderForPrompt(state)).toBe(
      [
        'Story state (authoritative; reuse these ids in your state block):',
        'Characters:',
        '- mira: Mira (alive, at harbor). A fisher',
        'Places:',
        '- harbor: The Harbor',
        '- lighthouse: The Lighthouse',
        'Items:',
        '- lantern: Lantern (held by player)',
        'Facts:',
        '- The lamp is out',
      ].join('\n'),
    );
  });

  it('given the same state rendered twice, then the bytes are identical', () => {
    const state = aHarborState();

    expect(renderForPrompt(state)).toBe(renderForPrompt(state));
  });

  it('given the same state built in a different insertion order, then the bytes are identical', () => {
    const entities = [
      anEntity('zed'),
      aPlace('dock'),
      anEntity('amy', { at: 'dock' }),
      anItem('rope', { holder: 'amy' }),
    ];
    const forward = aState(entities, ['Rope is wet']);
    const backward = aState([...entities].reverse(), ['Rope is wet']);

    expect(Object.keys(forward.entities)).not.toEqual(Object.keys(backward.entities));
    expect(renderForPrompt(backward)).toBe(renderForPrompt(forward));
  });
});

describe('renderRejections', () => {
  const refused: Rejection = {
    line: '{"type":"status","id":"bob","to":"dead"}',
    reason: 'unknown id "bob"',
    fix: 'Enter "bob" first.',
  };

  it('given no rejections, then it renders nothing', () => {
    expect(renderRejections([])).toBe('');
  });

  it('given rejections, then a bracketed note says part of the block was not applied and lists each fix', () => {
    expect(renderRejections([refused])).toBe(
      [
        '[Part of your last state block was not applied:',
        '- {"type":"status","id":"bob","to":"dead"} — unknown id "bob". Fix: Enter "bob" first.',
        "Apply these fixes in this turn's block where the change still holds.]",
      ].join('\n'),
    );
  });

  it('given many long rejections, then the note stays bounded', () => {
    const many = Array.from({ length: 70 }, () => ({ ...refused, line: 'x'.repeat(5000) }));

    const note = renderRejections(many);

    expect(note).toContain('- and 54 more not shown.');
    expect(note.length).toBeLessThan(16 * 260);
  });
});

describe('renderCanon', () => {
  it('given rules and forbidden changes, then it renders the heading and one bullet each, as the seed does', () => {
    const canon = aCanon({
      rules: ['Magic has a price', '  ', 'The king is a usurper'],
      forbiddenStatusChanges: [
        { from: 'dead', to: 'alive' },
        { from: 'destroyed', to: '' },
      ],
    });

    expect(renderCanon(canon)).toBe(
      [
        'Campaign canon (these are true and may not be contradicted):',
        '- Magic has a price',
        '- The king is a usurper',
        '- Nothing that is dead can become alive.',
      ].join('\n'),
    );
  });

  it('given no usable line, or no canon, then it renders nothing', () => {
    expect(
      renderCanon(aCanon({ rules: [' '], forbiddenStatusChanges: [{ from: 'dead', to: ' ' }] })),
    ).toBe('');
    expect(renderCanon(undefined)).toBe('');
  });
});
