// A do-action is written by the player about themself ("I push open the gate") and sent to the
// model about "you", as the predecessor does (https://help.aidungeon.com/the-do-mode): the model
// narrates best when every player turn reads in the second person. Words inside quotes are
// the character speaking and stay as they are.

const FIRST_PERSON =
  /\b(?:I\s+am|I\s+was|am\s+I|was\s+I|I['’]m|I['’]ve|I['’]ll|I['’]d|I|me|my|mine|myself)\b/gi;

const SECOND_PERSON: Record<string, string> = {
  'i am': 'you are',
  'i was': 'you were',
  'am i': 'are you',
  'was i': 'were you',
  "i'm": "you're",
  "i've": "you've",
  "i'll": "you'll",
  "i'd": "you'd",
  i: 'you',
  me: 'you',
  my: 'your',
  mine: 'yours',
  myself: 'yourself',
};

/** "the mine", "a mine": the pit, not the possessive. */
export const BEFORE_THE_NOUN_MINE = /\b(?:the|a|an|this|that|old|gold|coal|silver|iron)\s+$/i;

/** Text before a word that starts a sentence: nothing, or a finished sentence (quote closed). */
export const SENTENCE_ENDED = /(?:^|[.!?…]["”’)]*)\s*$/;

export const OPENS_QUOTE = new Set(['"', '“']);

/** `[start, end)` ranges of `text` outside quotes; an unclosed quote runs to the end. */
export function outsideQuotes(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let start = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quote === null && OPENS_QUOTE.has(char)) {
      ranges.push([start, i]);
      quote = char;
    } else if (quote !== null && (char === '"' || char === '”')) {
      quote = null;
      start = i + 1;
    }
  }
  if (quote === null) ranges.push([start, text.length]);
  return ranges.filter(([from, to]) => to > from);
}

function secondPersonOf(word: string, before: string): string | null {
  const key = word.toLowerCase().replace(/’/g, "'").replace(/\s+/g, ' ');
  if (key === 'mine' && BEFORE_THE_NOUN_MINE.test(before)) return null;
  let replacement = SECOND_PERSON[key];
  if (word.includes('’')) replacement = replacement.replace("'", '’');
  // "I" is capitalised wherever it stands, so only a sentence's start capitalises "you";
  // "My" or "Me" capitalised by the player keep their capital.
  const startsWithI = key === 'i' || key.startsWith('i ') || key.startsWith("i'");
  const capital =
    SENTENCE_ENDED.test(before) || (!startsWithI && /^[A-Z]/.test(word) && key !== 'am i');
  return capital ? replacement[0].toUpperCase() + replacement.slice(1) : replacement;
}

/**
 * `text` with its first-person words outside quotes in the second person:
 * `I raise my sword` → `You raise your sword`, `"I can't"` stays as it is.
 */
export function toSecondPerson(text: string): string {
  let result = '';
  let copied = 0;
  for (const [from, to] of outsideQuotes(text)) {
    const segment = text.slice(from, to);
    for (const match of segment.matchAll(FIRST_PERSON)) {
      const at = from + match.index;
      const replacement = secondPersonOf(match[0], text.slice(0, at));
      if (replacement === null) continue;
      result += text.slice(copied, at) + replacement;
      copied = at + match[0].length;
    }
  }
  return result + text.slice(copied);
}

/**
 * Whether a do-action already names who acts, so no "You" goes in front: it opens with
 * dialogue, or with the player's own "I", "My", "You" (the predecessor's rule).
 */
export function namesItsActor(text: string): boolean {
  return (
    OPENS_QUOTE.has(text[0] ?? '') ||
    /^(?:you|I|I['’](?:m|ve|ll|d)|my|me|mine|myself)\b/i.test(text)
  );
}
