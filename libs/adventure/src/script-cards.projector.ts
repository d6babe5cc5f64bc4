// Cards a script added belong to the turn that added them (docs/scripting.md §3.4, issue 27):
// the story node its append wrote (the player action for onInput, the narration for
// onModelContext and onOutput, the head when the turn stopped before writing one). A script's
// state already follows the head; its cards follow too, or Auto-Cards, handed the parent's state
// on a retry, makes the card the replaced take made a second time. So the projection keeps each
// script-added card's home node, and a card whose home is off the path at the head (undone,
// retried, branched away from), or is the take a retry in flight replaces, is parked: not in
// `cards`, so no prompt, script or reader sees it, but kept, so a redo or a branch switch back
// brings it back (at the end of the list).
//
// Parked cards still count: their ids are taken and they count towards storyCardsPerAdventure
// (cardIdsHeld, cardsHeld), because any of them may come back and the adventure must then still
// hold at most that many cards, each id once.
import type { StoryCard } from './adventure.events';
import type { AdventureState } from './adventure.state';

/** The fields these rules read and replace: the fast fold's state and the plain `evolve`'s both have them. */
type CardsState = Pick<
  AdventureState,
  'cards' | 'parkedCards' | 'scriptCardHomes' | 'head' | 'inFlight'
>;

/** A card a script just added: at home on the node at the head (the one its append wrote). */
export function homeScriptCard(draft: CardsState, cardId: string): void {
  if (draft.head === null) return;
  draft.scriptCardHomes = { ...draft.scriptCardHomes, [cardId]: draft.head };
}

/** A card removed for good: it has no home any more. */
export function forgetScriptCards(draft: CardsState, cardIds: readonly string[]): void {
  const homes = draft.scriptCardHomes;
  if (!cardIds.some((id) => id in homes)) return;
  const kept = { ...homes };
  for (const id of cardIds) delete kept[id];
  draft.scriptCardHomes = kept;
}

/** An import that replaces every card replaces the parked ones too: they do not come back. */
export function dropParkedCards(draft: CardsState): void {
  if (draft.parkedCards.length === 0) return;
  forgetScriptCards(
    draft,
    draft.parkedCards.map((card) => card.id),
  );
  draft.parkedCards = [];
}

function hasHomes(draft: CardsState): boolean {
  for (const _ in draft.scriptCardHomes) return true;
  return false;
}

/**
 * After the head or the turn in flight moved: park the cards whose home left, bring back those
 * whose home returned. `onPath` tells whether a node is on the path at the head.
 */
export function followPath(draft: CardsState, onPath: (id: string) => boolean): void {
  if (draft.parkedCards.length === 0 && !hasHomes(draft)) return;
  const homes = draft.scriptCardHomes;
  const replaced = draft.inFlight?.replacesActionId ?? null;
  const atHome = (card: StoryCard): boolean => {
    const home = homes[card.id];
    return home === undefined || (home !== replaced && onPath(home));
  };
  const leaving = draft.cards.filter((card) => !atHome(card));
  const returning = draft.parkedCards.filter(atHome);
  if (leaving.length === 0 && returning.length === 0) return;
  const left = new Set(leaving.map((card) => card.id));
  const back = new Set(returning.map((card) => card.id));
  draft.cards = [...draft.cards.filter((card) => !left.has(card.id)), ...returning];
  draft.parkedCards = [...draft.parkedCards.filter((card) => !back.has(card.id)), ...leaving];
}

/** Every card id the adventure holds, parked ones included: a new card may take none of them. */
export function cardIdsHeld(state: Pick<AdventureState, 'cards' | 'parkedCards'>): Set<string> {
  const ids = new Set(state.cards.map((card) => card.id));
  for (const card of state.parkedCards) ids.add(card.id);
  return ids;
}

/** The cards the adventure holds against storyCardsPerAdventure, parked ones included. */
export function cardsHeld(state: Pick<AdventureState, 'cards' | 'parkedCards'>): number {
  return state.cards.length + state.parkedCards.length;
}
