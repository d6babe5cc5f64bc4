import { ConflictError, InvalidCommandError, LimitExceededError } from './adventure.errors';
import type { ImportStoryCards } from './adventure.commands';
import type { Lorebook, StoryCard } from './adventure.events';
import { LIMITS } from './adventure.limits';
import { project } from './adventure.projector';
import { AdventureHistory } from './testing/adventure.factory';
import { given } from './testing/decider.given';

// The story-card import and the new card fields, given/when/then.

const book: Lorebook = {
  id: 'book-1',
  format: 'sillytavern',
  formatVersion: null,
  name: 'Harbour',
  raw: { name: 'Harbour', extensions: {} },
};

const importedCard = (id: string, overrides: Partial<StoryCard> = {}) => ({
  id,
  name: `Card ${id}`,
  keys: 'harbour\nquay',
  keySyntax: 'lines' as const,
  entry: 'The harbour freezes in winter.',
  priority: 120,
  origin: { format: 'sillytavern' as const, bookId: 'book-1', raw: { uid: 0, key: ['harbour'] } },
  ...overrides,
});

const importing = (
  cards: ImportStoryCards['data']['cards'],
  mode: 'merge' | 'replace' = 'merge',
): ImportStoryCards => ({ type: 'ImportStoryCards', data: { book, mode, cards, skipped: 1 } });

describe('ImportStoryCards', () => {
  it('given an adventure, when a book is merged, then one event holds the book and every card', () => {
    given(AdventureHistory.create())
      .when(importing([importedCard('c1'), importedCard('c2', { activation: 'always' })]))
      .then([
        {
          type: 'StoryCardsImported',
          data: {
            book,
            mode: 'merge',
            removedCardIds: [],
            skipped: 1,
            cards: [
              { ...importedCard('c1'), type: 'other', notes: '' },
              { ...importedCard('c2', { activation: 'always' }), type: 'other', notes: '' },
            ],
          },
        },
      ]);
  });

  it('given cards, when a book replaces them, then the old cards are named and go', () => {
    const history = AdventureHistory.create();
    const events = given(history).when(importing([importedCard('c1')], 'replace'));
    events.then([
      {
        type: 'StoryCardsImported',
        data: {
          book,
          mode: 'replace',
          removedCardIds: ['card-mira'],
          skipped: 1,
          cards: [{ ...importedCard('c1'), type: 'other', notes: '' }],
        },
      },
    ]);
    history.run(importing([importedCard('c1')], 'replace'));
    expect(history.state.cards.map((card) => card.id)).toEqual(['c1']);
    expect(history.state.lorebooks).toEqual([book]);
    expect(project(history.events)).toEqual(history.state);
  });

  it('refuses, writing nothing, a book past the card limit, naming it', () => {
    const many = Array.from({ length: LIMITS.storyCardsPerAdventure }, (_, i) =>
      importedCard(`c${i}`),
    );
    given(AdventureHistory.create())
      .when(importing(many))
      .thenThrows(LimitExceededError, 'limit', /at most 5000 story cards/);
    // Replacing frees the adventure's own card, so the same 5,000 fit.
    expect(() => AdventureHistory.create().run(importing(many, 'replace'))).not.toThrow();
  });

  it('refuses a card id already held, a bad field, an origin from another book', () => {
    given(AdventureHistory.create())
      .when(importing([importedCard('card-mira')]))
      .thenThrows(ConflictError, 'conflict', /card-mira already exists/);
    given(AdventureHistory.create())
      .when(importing([importedCard('c1', { placement: { kind: 'nowhere' } as never })]))
      .thenThrows(InvalidCommandError, 'invalid', /card\.placement\.kind must be one of/);
    given(AdventureHistory.create())
      .when(
        importing([importedCard('c1', { origin: { format: 'aid', bookId: 'other', raw: {} } })]),
      )
      .thenThrows(InvalidCommandError, 'invalid', /origin\.bookId must be the book's id/);
  });

  it('refuses a source entry too large to keep', () => {
    given(AdventureHistory.create())
      .when(
        importing([
          importedCard('c1', {
            origin: {
              format: 'aid',
              bookId: 'book-1',
              raw: { value: 'x'.repeat(LIMITS.loreRawChars) },
            },
          }),
        ]),
      )
      .thenThrows(InvalidCommandError, 'invalid', /card\.origin\.raw is \d+ characters/);
  });
});

describe('card fields', () => {
  it('adds a card with the new fields, refusing an origin (the import sets it)', () => {
    const card = {
      id: 'c9',
      name: 'Tide',
      keys: ' Tide ,(Tide ',
      keySyntax: 'aid' as const,
      entry: 'x',
      conditions: [{ mode: 'notAllOf' as const, keys: ['calm'] }],
      scan: { actions: 2 },
    };
    given(AdventureHistory.create())
      .when({ type: 'AddStoryCard', data: { card } })
      .then([{ type: 'StoryCardAdded', data: { card: { ...card, type: 'other', notes: '' } } }]);
    given(AdventureHistory.create())
      .when({
        type: 'AddStoryCard',
        data: { card: { ...card, origin: { format: 'aid', bookId: 'b', raw: {} } } },
      })
      .thenThrows(InvalidCommandError, 'invalid', /origin is set by a lore import only/);
  });

  it('edits a new field, and null puts the default back', () => {
    const history = AdventureHistory.create();
    history.run({
      type: 'EditStoryCard',
      data: { cardId: 'card-mira', changes: { priority: 300, wholeWords: true } },
    });
    expect(history.state.cards[0]).toMatchObject({ priority: 300, wholeWords: true });
    given(history)
      .when({
        type: 'EditStoryCard',
        data: { cardId: 'card-mira', changes: { priority: 300, wholeWords: null } },
      })
      .then([
        { type: 'StoryCardEdited', data: { cardId: 'card-mira', changes: { wholeWords: null } } },
      ]);
    history.run({
      type: 'EditStoryCard',
      data: { cardId: 'card-mira', changes: { wholeWords: null } },
    });
    expect(history.state.cards[0]).not.toHaveProperty('wholeWords');
    expect(project(history.events)).toEqual(history.state);
  });

  it('names an unknown field and a bad value', () => {
    given(AdventureHistory.create())
      .when({
        type: 'EditStoryCard',
        data: { cardId: 'card-mira', changes: { colour: 'red' } as never },
      })
      .thenThrows(InvalidCommandError, 'invalid', /card\.colour is not a story card field/);
    given(AdventureHistory.create())
      .when({
        type: 'EditStoryCard',
        data: { cardId: 'card-mira', changes: { scan: { actions: -1 } } },
      })
      .thenThrows(InvalidCommandError, 'invalid', /card\.scan\.actions must be an integer/);
  });
});
