// Whether a turn of the history is in a prompt: the prompt carries the story's own text (the
// history window whole, a recalled passage perhaps as a part of a turn), so a turn counts as
// present when a run of its words is there verbatim. Words are compared lower-cased with
// punctuation dropped, so a defused fence or a changed quote mark does not hide a turn; a run is
// long enough that two different turns of a conversation do not share one by chance.

/** Words a run holds: shorter turns must be there whole. */
export const RUN_WORDS = 12;

function words(text: string): string[] {
  // Modifier letters are no words: the prompt defuses a ``` fence into ˋˋˋ (libs/narrative).
  return (
    text
      .toLowerCase()
      .replace(/\p{Lm}/gu, ' ')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** A prompt in the form `containsTurn` searches. */
export interface NormalizedPrompt {
  text: string;
}

export function normalizePrompt(...parts: string[]): NormalizedPrompt {
  return { text: ` ${words(parts.join('\n')).join(' ')} ` };
}

/** The turn's runs of RUN_WORDS words, end to end (the last one ends with the turn). */
export function turnRuns(content: string): string[] {
  const all = words(content);
  if (all.length === 0) return [];
  if (all.length <= RUN_WORDS) return [all.join(' ')];
  const runs: string[] = [];
  for (let start = 0; start + RUN_WORDS <= all.length; start += RUN_WORDS) {
    runs.push(all.slice(start, start + RUN_WORDS).join(' '));
  }
  if (all.length % RUN_WORDS !== 0) runs.push(all.slice(-RUN_WORDS).join(' '));
  return runs;
}

/** Some run of the turn is in the prompt. */
export function containsTurn(prompt: NormalizedPrompt, runs: readonly string[]): boolean {
  return runs.some((run) => prompt.text.includes(` ${run} `));
}
