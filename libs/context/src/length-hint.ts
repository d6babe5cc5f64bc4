// Output-length guidance. The endpoint enforces `max_output_tokens` as a hard
// limit, and it truncates the reply mid-sentence when the model reaches it. The
// state block is emitted last, so truncation removes it. Asking the model to
// finish inside the limit prevents the truncation.

/** Tokens reserved from the cap for the state block. */
export const LENGTH_HEADROOM = 50;
// Models cannot count their own tokens, but they do follow a word budget, so the
// hint states a number of words. English prose averages 0.75 words per token.
export const WORDS_PER_TOKEN = 0.75;
// Models regularly exceed a word budget, and the cap it protects is a hard
// limit. Aiming 10% below the real ceiling leaves room for that overshoot, so it
// does not consume the state block.
export const LENGTH_BUFFER = 0.9;
/** Below this, the hint adds nothing useful. */
export const MIN_LENGTH_HINT_WORDS = 40;
// A ceiling on its own gives one-sided guidance, and models respond to it
// differently. A verbose model treats it as a limit. A terse model has only the
// instruction to write as much as the moment needs, and it produces two
// paragraphs. Adding a floor turns the guidance into a range, so the same prompt
// produces a similar length from either model. The floor is a share of the
// ceiling so that it can never approach the ceiling.
export const LENGTH_FLOOR_SHARE = 0.35;
// Below this word count, a floor means nothing, because a short turn is the
// correct turn at a tight cap. The wording used at a tight cap is also the
// wording that was measured to preserve the state block, so it is unchanged.
export const MIN_LENGTH_FLOOR_WORDS = 60;
// The floor prevents a collapse to two paragraphs. It does not ask for an essay.
// At a 2400-token cap, the share alone would request a minimum of 555 words. A
// reader who wants longer turns can ask for them in the author's note.
export const MAX_LENGTH_FLOOR_WORDS = 300;

/**
 * Asks for a turn that fits inside the output cap, stated as a word budget.
 *
 * Returns '' when the cap is too small to state usefully. The model can exceed the hint, so
 * the hint earns its tokens only when there is enough room for that overshoot to stay inside
 * the cap.
 */
export function lengthHint(maxOutputTokens: number): string {
  // Python's int() truncates toward zero; so does Math.trunc (a cap below the headroom gives a
  // negative number, which is under the minimum either way).
  const words = Math.trunc((maxOutputTokens - LENGTH_HEADROOM) * WORDS_PER_TOKEN * LENGTH_BUFFER);
  if (words < MIN_LENGTH_HINT_WORDS) return '';
  const tail = ' Finish the narration and append the state block well inside the limit.';

  // State the number as a ceiling, never as a budget. In measurements, the
  // wording "keep this turn under about N words" read to the model as a target
  // to fill. It raised the average from 174 words to 246 across five runs, and
  // every hinted run was longer than every unhinted run. The hint therefore
  // pushed turns toward the limit it exists to avoid. Naming the number as a
  // limit, and adding that a typical turn is much shorter, held the average at
  // 170 while still preserving the state block at tight caps.
  const floor = Math.min(Math.trunc(words * LENGTH_FLOOR_SHARE), MAX_LENGTH_FLOOR_WORDS);
  if (floor < MIN_LENGTH_FLOOR_WORDS) {
    return (
      `[Hard limit: this turn must not exceed ${words} words. Write only as ` +
      `much as the moment needs — a typical turn is much shorter.${tail}]`
    );
  }
  // Both numbers are bounds, and the wording is deliberately asymmetric. The
  // ceiling uses "must not exceed", because the endpoint enforces it. The floor
  // uses "should not stop short of". Neither reads as a target, which the
  // measurement above shows is what matters. The clause that asks the model to
  // prefer the lower end does the job the earlier wording did, which was to
  // keep a verbose model away from the ceiling. It now has a number beneath it,
  // so a terse model reading the same clause stops at the floor rather than at
  // forty words.
  return (
    `[Hard limit: this turn must not exceed ${words} words, and it should not ` +
    `stop short of about ${floor}. Prefer the lower end of that range unless ` +
    `the scene genuinely needs more.${tail}]`
  );
}
