// The one place this lib touches libs/narrative's functions, so the projector's fold and the
// decider's validation read the narrative protocol through the same calls.

import {
  InvalidCorrectionError,
  applyCorrection,
  foldNarrative,
  foldTurn,
  initialNarrativeState,
  parseReply,
  referee,
  stateEventsIn,
  type Canon,
  type Correction,
  type NarrativeState,
  type NarrativeTurn,
  type Rejection,
  type StateEvent,
} from '@chronicle/narrative';

export type NarrativeCorrection = Correction;
export { initialNarrativeState, stateEventsIn };

/** What a narration records of the state block its model reported. */
export interface ReplyVerdict {
  accepted: StateEvent[];
  /** The block's unreadable lines (the parser's), then the events the referee refused. */
  rejected: Rejection[];
}

/**
 * The model's proposal judged: the reply's last state block parsed, and its events refereed
 * against the narrative state and canon the narration is appended to. An event the player's
 * text of the turn carried is refused (`playerEvents`).
 */
export function judgeReply(
  reply: string,
  narrative: NarrativeState,
  canon: Canon,
  playerEvents: readonly StateEvent[],
): ReplyVerdict {
  const parsed = parseReply(reply);
  const verdict = referee(narrative, canon, parsed.events, { playerEvents });
  return { accepted: verdict.accepted, rejected: [...parsed.rejections, ...verdict.rejected] };
}

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
