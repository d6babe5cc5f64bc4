import { ConflictError } from './adventure.errors';
import { AdventureHistory } from './testing/adventure.factory';
import { given } from './testing/decider.given';

// Cards a script added follow the story tree (issue 27, item 3): a card belongs to the node its
// turn wrote; off that node's path it is parked (out of `cards`, kept), and it comes back when
// the path does. A parked card's id stays taken.

const source = { scriptId: 'auto-cards', hook: 'output' as const, turnId: 't' };
const vex = {
  id: 'card-vex-script',
  name: 'Vex',
  keys: 'Vex',
  entry: 'Vex guards the lamp.',
  type: 'character',
  notes: '',
};

function withScriptCard() {
  const history = AdventureHistory.create();
  history.turn('do', 'climb the stairs');
  // As the Narrated append carries it: the card's event right after the narration.
  history.append({ type: 'StoryCardAdded', data: { card: vex, source } });
  return history;
}
const names = (history: AdventureHistory) => history.state.cards.map((card) => card.name);

describe('cards a script added', () => {
  it('given a card an Output hook added, when the turn is undone, then it is parked; redo brings it back', () => {
    const history = withScriptCard();
    expect(names(history)).toContain('Vex');
    history.run({ type: 'Undo', data: {} });
    expect(names(history)).not.toContain('Vex');
    expect(history.state.parkedCards.map((card) => card.id)).toEqual([vex.id]);
    history.run({ type: 'Redo', data: {} });
    expect(names(history)).toContain('Vex');
    expect(history.state.parkedCards).toEqual([]);
  });

  it("given a retry in flight, then the replaced take's card is parked; a failed retry brings it back, a new take leaves it parked", () => {
    const history = withScriptCard();
    history.requestRetry();
    expect(names(history)).not.toContain('Vex');
    history.fail();
    expect(names(history)).toContain('Vex');
    history.retry();
    expect(names(history)).not.toContain('Vex');
  });

  it('given a parked card, then its id is still taken: a card with that id is refused', () => {
    const history = withScriptCard();
    history.run({ type: 'Undo', data: {} });
    given(history)
      .when({ type: 'AddStoryCard', data: { card: { ...vex, name: 'Another' } } })
      .thenThrows(ConflictError, 'conflict', /already exists/);
  });

  it("given a player's card, then it stays whatever the path does", () => {
    const history = AdventureHistory.create();
    history.turn('do', 'climb the stairs');
    history.append({ type: 'StoryCardAdded', data: { card: { ...vex, id: 'player-card' } } });
    history.run({ type: 'Undo', data: {} });
    expect(history.state.cards.map((card) => card.id)).toContain('player-card');
  });
});
