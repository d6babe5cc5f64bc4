// libs/narrative: the typed-event state protocol. One model call per turn:
//   parseReply(model output) → narration (stored, prose only) + candidate events
//   referee(state at head, canon, events) → accepted (stored on the AI turn) + rejected
//   foldNarrative(turns on the path, with retcons and corrections) → state at the head
//   renderForPrompt(state), renderRejections(previous AI turn's rejected), renderCanon(canon),
//   EMIT_RULE (system block) and EMIT_REMINDER (last section) → the prompt.
// The player's text is never parsed as state: only model output goes to parseReply; the player's
// text enters the prompt defused (defuseStateFences), and the referee refuses an event the
// player's own action carried (`playerText`).
export * from './narrative.types';
export * from './narrative.limits';
export { EMIT_REMINDER, EMIT_RULE } from './emit-rule.prompt';
export { FENCE_MARK, parseReply } from './reply.parser';
export { ProseStreamFilter } from './prose-stream.filter';
export { referee, type RefereeOptions } from './narrative.referee';
export {
  defuseStateFences,
  echoKeys,
  echoedEvents,
  isEchoOf,
  stateEventsIn,
} from './player-text.guard';
export { evolve, initialNarrativeState } from './narrative.state';
export { foldNarrative, foldTurn } from './narrative.fold';
export { CANON_HEADING, renderCanon } from './narrative.canon';
export { STATE_HEADING, renderForPrompt, renderRejections } from './narrative.render';
export { InvalidCorrectionError, applyCorrection, applyCorrections } from './narrative.correction';
