import { cardKeys, matchCards } from './story-cards.match';
import { aCard } from './testing';

describe('matchCards', () => {
  it('splits keys on commas, trims them and drops empty ones', () => {
    expect(cardKeys(' Boat , ,the Old Man,, 🐉 ')).toEqual(['boat', 'the old man', '🐉']);
  });

  it('matches case-insensitively, partial words included', () => {
    const [match] = matchCards([aCard('b', 'BOAT', 'Boats.')], 'Three boats drift.');
    expect(match).toEqual({ id: 'b', name: 'b', keyword: 'boat', entry: 'Boats.' });
  });

  it('respects spaces inside a key', () => {
    expect(matchCards([aCard('m', 'old man', 'x')], 'an oldman')).toEqual([]);
    expect(matchCards([aCard('m', 'old man', 'x')], 'an Old Man')).toHaveLength(1);
  });

  it('matches unicode and emoji keys', () => {
    const cards = [aCard('e', 'Éowyn', 'x'), aCard('d', 'ドラゴン', 'x'), aCard('f', '🔥', 'x')];
    expect(matchCards(cards, 'ÉOWYN sees the ドラゴン 🔥').map((m) => m.keyword)).toEqual([
      'éowyn',
      'ドラゴン',
      '🔥',
    ]);
  });

  it('reports each card once, on its first matching key, in card order', () => {
    const cards = [aCard('2', 'zebra, lion', 'x'), aCard('1', 'lion', 'x')];
    expect(matchCards(cards, 'a lion and a zebra').map((m) => [m.id, m.keyword])).toEqual([
      ['2', 'zebra'],
      ['1', 'lion'],
    ]);
  });
});
