import { diffCards } from './card-diff';
import type { SandboxCard } from './scripting.types';

const card = (id: string, title = `t${id}`): SandboxCard => ({
  id,
  title,
  keys: title,
  type: 'Custom',
  entry: `e${id}`,
  description: '',
});
let counter = 0;
const newId = () => `new-${++counter}`;

describe('diffCards', () => {
  it('given untouched cards, when diffed, then records nothing', () => {
    const before = [card('1'), card('2')];
    const diff = diffCards(before, JSON.stringify(before), newId);
    expect(diff).toEqual({ kind: 'ok', cards: before, ops: [], logs: [] });
  });

  it('given a title write, a push without id and a move to the top, then Updated, Added and Reordered (C18)', () => {
    const before = [card('1'), card('2'), card('3')];
    const after: unknown[] = before.map((c) => ({ ...c }));
    (after[1] as SandboxCard).title = 'renamed';
    after.push({ title: 'pushed', keys: ['a', 'b'], entry: 'x' });
    after.unshift(after.splice(2, 1)[0]);
    const diff = diffCards(before, JSON.stringify(after), newId);
    if (diff.kind !== 'ok') throw new Error(diff.error);
    const added = diff.ops.find((op) => op.op === 'added');
    expect(added).toMatchObject({
      op: 'added',
      card: { title: 'pushed', keys: 'a,b', type: 'Custom' },
    });
    expect(added && added.op === 'added' && added.card.id).toMatch(/^new-/);
    expect(diff.ops).toContainEqual({ op: 'updated', id: '2', fields: { title: 'renamed' } });
    expect(diff.ops).toContainEqual({ op: 'reordered', order: ['3', '1', '2', diff.cards[3].id] });
  });

  it('given a spliced card, then Removed and no Reordered for the shift', () => {
    const before = [card('1'), card('2'), card('3')];
    const diff = diffCards(before, JSON.stringify([before[0], before[2]]), newId);
    expect(diff).toMatchObject({ kind: 'ok', ops: [{ op: 'removed', id: '2' }] });
  });

  it('given a duplicate id, then the second copy is a new card', () => {
    const before = [card('1')];
    const diff = diffCards(before, JSON.stringify([before[0], before[0]]), newId);
    if (diff.kind !== 'ok') throw new Error(diff.error);
    expect(diff.cards.map((c) => c.id)).toEqual(['1', expect.stringMatching(/^new-/)]);
  });

  it('given an oversize field, then it is truncated with a log line, never failing', () => {
    const diff = diffCards([], JSON.stringify([{ id: '9', entry: 'x'.repeat(20) }]), newId, {
      cards: 10,
      fieldChars: 5,
    });
    expect(diff).toMatchObject({ kind: 'ok', cards: [{ entry: 'xxxxx' }] });
    expect(diff.kind === 'ok' && diff.logs[0]).toMatch(/entry truncated/);
  });

  it('given __proto__ or constructor keys, then the cards are refused (S6)', () => {
    for (const json of ['[{"id":"1","__proto__":{"polluted":1}}]', '[{"constructor":{}}]']) {
      expect(diffCards([], json, newId)).toMatchObject({ kind: 'invalid' });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('given something other than an array, or too many cards, then invalid', () => {
    expect(diffCards([], '{}', newId)).toMatchObject({ kind: 'invalid' });
    expect(diffCards([], undefined, newId)).toMatchObject({ kind: 'invalid' });
    expect(diffCards([], '[{},{}]', newId, { cards: 1, fieldChars: 10 })).toMatchObject({
      kind: 'invalid',
      error: 'more than 1 story cards',
    });
  });
});
