// In a room several players act in one story, so "you" no longer says who: an action is written
// about its character by name, as AI Dungeon's multiplayer does (docs/multiplayer.md §3.2):
// "I draw my sword" by Mira reads "Mira draws her sword". Words inside quotes are the character
// speaking and stay as they are.

import { isAdverb, thirdPersonSingular } from './player-input.verbs';
import { BEFORE_THE_NOUN_MINE, SENTENCE_ENDED, outsideQuotes } from './player-input.person';

/** Who an action is written about: a room member's character. */
export interface ActingCharacter {
  name: string;
  /** Like a persona's: "she/her", "he/him", "they/them", "xe/xem/xyr/xyrs/xemself"; "" = they. */
  pronouns: string;
}

interface PronounSet {
  subject: string;
  object: string;
  determiner: string;
  possessive: string;
  reflexive: string;
  /** "they" takes a plural verb: "they are", "they draw". */
  plural: boolean;
}

const KNOWN_PRONOUNS: Record<string, PronounSet> = {
  she: {
    subject: 'she',
    object: 'her',
    determiner: 'her',
    possessive: 'hers',
    reflexive: 'herself',
    plural: false,
  },
  he: {
    subject: 'he',
    object: 'him',
    determiner: 'his',
    possessive: 'his',
    reflexive: 'himself',
    plural: false,
  },
  they: {
    subject: 'they',
    object: 'them',
    determiner: 'their',
    possessive: 'theirs',
    reflexive: 'themselves',
    plural: true,
  },
  it: {
    subject: 'it',
    object: 'it',
    determiner: 'its',
    possessive: 'its',
    reflexive: 'itself',
    plural: false,
  },
};

/**
 * The pronouns of `character`: she, he, they and it by their first word; any other set by its
 * parts in the order subject/object/determiner/possessive/reflexive, the missing ones by the
 * name ("Mira's") or the object ("xemself"). No pronouns means they.
 */
export function pronounsOf(character: ActingCharacter): PronounSet {
  const parts = character.pronouns
    .toLowerCase()
    .split('/')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) return KNOWN_PRONOUNS.they;
  const known = KNOWN_PRONOUNS[parts[0]];
  if (known) return known;
  const [subject, object = subject] = parts;
  const named = `${character.name}'s`;
  return {
    subject,
    object,
    determiner: parts[2] ?? named,
    possessive: parts[3] ?? named,
    reflexive: parts[4] ?? `${object}self`,
    plural: false,
  };
}

const FIRST_PERSON = /\b(?:am\s+I|was\s+I|I['’](?:m|ve|ll|d)|I|me|my|mine|myself)\b/gi;

/** A sentence ends between two mentions: the second "I" names the character again. */
const SENTENCE_BREAK = /[.!?…;]["”’)]*\s/;

/** "Tom and I", "the guard and I": the verb after belongs to both, and stays plural. */
const SHARES_THE_SUBJECT =
  /(?:^|[.!?…;:,]["”’)]*\s+)(?:(?:the|a|an|my|our|his|her|their)\s+)?\S+\s+(?:and|or|nor)\s+$/i;

/** The next word after a subject: the space before it, the word (`don't` whole). */
const NEXT_WORD = /^(\s+)([A-Za-z]+(?:n['’]t)?)(?=$|[^A-Za-z'’])/;

/** "then draw" after the character's verb: a second verb of the same subject. */
const THEN_VERB = /\bthen\s+([a-z]+)\b/;

interface Edit {
  from: number;
  to: number;
  text: string;
}

function capitalised(word: string): string {
  return word[0].toUpperCase() + word.slice(1);
}

/** The verb after a subject, as that subject takes it. */
function agreeing(verb: string, pronouns: PronounSet | null): string {
  if (pronouns?.plural) return verb === 'am' ? 'are' : verb === 'was' ? 'were' : verb;
  return thirdPersonSingular(verb);
}

interface Subject {
  word: string;
  /** null when the subject is the name, which takes a singular verb. */
  by: PronounSet | null;
}

/**
 * `text` (a do-action) with its first-person words outside quotes about `character`: the first
 * "I" of a sentence becomes the name, a later one the subject pronoun; the verb after it agrees
 * ("I draw" → "Mira draws", "they draw"); me/my/mine/myself become the pronouns. When the
 * action opens with "My" or "Me", the name stands there instead ("Mira's heart hurts").
 */
export function toThirdPerson(text: string, character: ActingCharacter): string {
  const writer = new ThirdPersonWriter(text, character);
  for (const [from, to] of outsideQuotes(text)) {
    for (const match of text.slice(from, to).matchAll(FIRST_PERSON)) {
      writer.rewrite(match[0], from + match.index, to);
    }
  }
  return writer.written();
}

/** The edits that turn one do-action's first-person words into a character's. */
class ThirdPersonWriter {
  private readonly pronouns: PronounSet;
  private readonly edits: Edit[] = [];
  /** Where the name last stood as the subject: a later "I" in that sentence is a pronoun. */
  private namedAt: number | null = null;

  constructor(
    private readonly text: string,
    private readonly character: ActingCharacter,
  ) {
    this.pronouns = pronounsOf(character);
  }

  /** The first-person `word` at `at`, in the stretch outside quotes that ends at `segmentEnd`. */
  rewrite(word: string, at: number, segmentEnd: number): void {
    const end = at + word.length;
    const key = word.toLowerCase().replace(/’/g, "'").replace(/\s+/g, ' ');
    const apostrophe = word.includes('’') ? '’' : "'";
    const before = this.text.slice(0, at);
    if (key === 'mine' && BEFORE_THE_NOUN_MINE.test(before)) return;
    const clash = this.edits.some((edit) => at < edit.to && end > edit.from);
    // "I am I": "am" is the first I's verb already; the second I stands alone.
    if (clash && (key === 'am i' || key === 'was i'))
      return this.rewrite(word.slice(-1), end - 1, segmentEnd);
    if (clash) return;
    const object: Record<string, string> = {
      me: this.pronouns.object,
      my: this.pronouns.determiner,
      mine: this.pronouns.possessive,
      myself: this.pronouns.reflexive,
    };
    if (object[key] !== undefined && at === 0) {
      this.namedAt = 0;
      const name = this.character.name;
      this.edit(at, end, key === 'my' || key === 'mine' ? `${name}${apostrophe}s` : name);
    } else if (object[key] !== undefined) {
      this.edit(at, end, this.atSentenceStart(at) ? capitalised(object[key]) : object[key]);
    } else if (key === 'am i' || key === 'was i') {
      const subject = this.subjectAt(at);
      const verb = agreeing(key.slice(0, -2), subject.by);
      this.edit(at, end, `${this.atSentenceStart(at) ? capitalised(verb) : verb} ${subject.word}`);
    } else if (key.startsWith("i'")) {
      this.edit(at, end, contracted(this.subjectAt(at), key.slice(2), apostrophe));
    } else {
      const subject = this.subjectAt(at);
      this.edit(at, end, subject.word);
      if (!SHARES_THE_SUBJECT.test(before)) {
        this.edits.push(...verbEdits(this.text, end, segmentEnd, subject.by));
      }
    }
  }

  written(): string {
    let result = '';
    let copied = 0;
    for (const edit of [...this.edits].sort((a, b) => a.from - b.from)) {
      result += this.text.slice(copied, edit.from) + edit.text;
      copied = edit.to;
    }
    return result + this.text.slice(copied);
  }

  private edit(from: number, to: number, text: string): void {
    this.edits.push({ from, to, text });
  }

  private atSentenceStart(at: number): boolean {
    return SENTENCE_ENDED.test(this.text.slice(0, at));
  }

  /** The name, first in a sentence; the subject pronoun after it. */
  private subjectAt(at: number): Subject {
    if (this.namedAt === null || SENTENCE_BREAK.test(this.text.slice(this.namedAt, at))) {
      this.namedAt = at;
      return { word: this.character.name, by: null };
    }
    const word = this.pronouns.subject;
    return { word: this.atSentenceStart(at) ? capitalised(word) : word, by: this.pronouns };
  }
}

/** "I'm", "I've", "I'll", "I'd" for the subject: "Mira is", "she's", "they're". */
function contracted(subject: Subject, rest: string, apostrophe: string): string {
  if (subject.by === null) {
    const spelled: Record<string, string> = { m: 'is', ve: 'has', ll: 'will' };
    return spelled[rest]
      ? `${subject.word} ${spelled[rest]}`
      : `${subject.word}${apostrophe}${rest}`;
  }
  const ending =
    rest === 'm'
      ? subject.by.plural
        ? 're'
        : 's'
      : rest === 've' && !subject.by.plural
        ? 's'
        : rest;
  return `${subject.word}${apostrophe}${ending}`;
}

/**
 * The verb after the subject that ends at `end` made to agree, and a second verb after "then" in
 * the same clause ("I draw, then charge"). A verb after a plain "and" is left alone: "my sword and
 * shield" and "my sword and charge" cannot be told apart without a dictionary.
 */
function verbEdits(text: string, end: number, segmentEnd: number, by: PronounSet | null): Edit[] {
  let verbAt = end;
  let verb = '';
  for (;;) {
    const next = NEXT_WORD.exec(text.slice(verbAt, segmentEnd));
    if (!next) return [];
    verbAt += next[1].length;
    verb = next[2];
    if (!isAdverb(verb)) break;
    verbAt += verb.length;
  }
  const edits: Edit[] = [];
  const agreed = agreeing(verb, by);
  if (agreed !== verb) edits.push({ from: verbAt, to: verbAt + verb.length, text: agreed });
  const clause = text.slice(verbAt + verb.length, segmentEnd).split(/[.!?…;]/)[0];
  const then = THEN_VERB.exec(clause);
  if (then && !/\bI\b/.test(clause.slice(0, then.index))) {
    const thenAt = verbAt + verb.length + then.index + then[0].length - then[1].length;
    const thenAgreed = agreeing(then[1], by);
    if (thenAgreed !== then[1])
      edits.push({ from: thenAt, to: thenAt + then[1].length, text: thenAgreed });
  }
  return edits;
}
