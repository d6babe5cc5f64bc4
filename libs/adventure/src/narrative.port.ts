// The one place this lib touches libs/narrative's functions, so the projector's fold and the
// decider's validation read the narrative protocol through the same calls.

import {
  InvalidCorrectionError,
  applyCorrection,
  foldNarrative,
  foldTurn,
  initialNarrativeState,
  type Correction,
  type NarrativeState,
  type NarrativeTurn,
  type StateEvent,
} from '@chronicle/narrative';

export type NarrativeCorrection = Correction;
export { initialNarrativeState };

/** What a story node holds for the narrative state (an `ActionNode`'s fields). */
interface ContributingNode {
  erased: boolean;
  accepted: StateEvent[];
  retconned: number[];
  corrections: Correction[];
}

/** What a node adds to the narrative state; an erased node keeps only the player's corrections. */
export function contribution(node: ContributingNode): NarrativeTurn {
  return node.erased
    ? { accepted: [], corrections: node.corrections }
    : { accepted: node.accepted, retconned: node.retconned, corrections: node.corrections };
}

export function hasContribution(node: ContributingNode): boolean {
  return node.accepted.length > 0 || node.corrections.length > 0;
}

/**
 * The state after one node's contribution: its accepted events minus the retconned ones, then
 * the corrections made while it was the head. Total: a correction that no longer fits is
 * skipped, so a replay always reaches a state.
 */
export function applyNarrativeTurn(state: NarrativeState, turn: NarrativeTurn): NarrativeState {
  return foldTurn(state, turn);
}

/**
 * The state after several nodes' contributions in path order. One draft for the whole run: a
 * refold along a 5,000-action path copied the entity record and the fact list once per node.
 */
export function applyNarrativeTurns(
  turns: readonly NarrativeTurn[],
  from: NarrativeState = initialNarrativeState(),
): NarrativeState {
  return foldNarrative(turns, from);
}

/** Applies a correction, or returns why it cannot be applied to this state. */
export function tryCorrection(
  state: NarrativeState,
  correction: NarrativeCorrection,
): { ok: true; state: NarrativeState } | { ok: false; reason: string } {
  try {
    return { ok: true, state: applyCorrection(state, correction) };
  } catch (error) {
    if (error instanceof InvalidCorrectionError) return { ok: false, reason: error.message };
    throw error;
  }
}
