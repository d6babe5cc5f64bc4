// The state at a head is a fold, never a copy that can drift: the adventure projection walks the
// story path from the root to the head and hands each turn's record here. Undo, retry and branch
// switches change the path, retcons and corrections change a turn's record, and the state is
// recomputed from them.
//
// Within a turn, its accepted events apply first (less those withdrawn by a retcon), then the
// corrections the player made while that turn was the head. An accepted event records what was
// true when it was accepted; after a retcon or a correction it may no longer fit (its subject
// withdrawn, say), and `evolve` then leaves the state as it is. A correction that no longer fits
// is skipped the same way: it was valid when made, and the fold must never fail to produce a
// state at a head the player can reach.

import { InvalidCorrectionError, applyCorrection } from './narrative.correction';
import { draftOf, evolveDraft, initialNarrativeState } from './narrative.state';
import type { NarrativeState, NarrativeTurn } from './narrative.types';

/** Folds one turn into a draft (see `draftOf`), returning the draft to use next. */
function foldInto(draft: NarrativeState, turn: NarrativeTurn): NarrativeState {
  const withdrawn = new Set(turn.retconned ?? []);
  turn.accepted.forEach((event, index) => {
    if (!withdrawn.has(index)) evolveDraft(draft, event);
  });
  let current = draft;
  for (const correction of turn.corrections ?? []) {
    try {
      // The result shares parts only with the draft it replaces, so it is a draft too.
      current = applyCorrection(current, correction);
    } catch (error) {
      if (!(error instanceof InvalidCorrectionError)) throw error;
    }
  }
  return current;
}

/** Folds one turn's record into the state. Pure. */
export function foldTurn(state: NarrativeState, turn: NarrativeTurn): NarrativeState {
  return foldInto(draftOf(state), turn);
}

/**
 * The narrative state after the given turns, in path order. `from` is a snapshot to start from
 * (the state before the first of these turns); it defaults to the empty state. Pure.
 */
export function foldNarrative(
  turns: readonly NarrativeTurn[],
  from: NarrativeState = initialNarrativeState(),
): NarrativeState {
  return turns.reduce(foldInto, draftOf(from));
}
