// The verb of a do-action written about a character by name is in the third person singular
// ("Mira draws"), where the player typed it after "I" ("I draw"). The word after the subject is
// a verb in all but odd inputs, so no dictionary is needed to find it: only the words a player
// puts there that must not change (modals, past tense, words that are no verb at all).

/** Verbs that stay as they are after any subject. */
const UNCHANGED = new Set([
  'can',
  'could',
  'will',
  'would',
  'shall',
  'should',
  'may',
  'might',
  'must',
  'ought',
  'did',
  'was',
  'were',
  'had',
  'used',
]);

/** Past tense forms that do not end in -ed (the common irregular verbs). */
const IRREGULAR_PAST = new Set(
  (
    'ate went awoke became began bent bit bled blew bore bought broke brought built caught chose clung ' +
    'came crept dealt drank drew drove dug dwelt fed fell felt fled flew flung forbade forgave ' +
    'forgot fought found froze gave got grew hung heard held hid knelt knew laid leapt led left ' +
    'lent lit lost made meant met overcame paid ran rang rode rose sang sank sat saw said sent ' +
    'shone shook shot shrank slept slid slung sold sought spat spent spoke sprang spun stank ' +
    'stole stood struck stuck stung strode strove swam swept swore swung taught thought threw ' +
    'told took tore trod understood wept woke won wore wove wrote withdrew'
  ).split(' '),
);

/** Verbs in -ed that are present tense: "I need" → "needs". */
const PRESENT_IN_ED = new Set([
  'need',
  'feed',
  'bleed',
  'breed',
  'heed',
  'speed',
  'proceed',
  'succeed',
  'exceed',
  'shred',
  'embed',
  'wed',
  'bed',
]);

/** Words a player may write where the verb would stand that are no verb. */
const NOT_A_VERB = new Set(
  (
    'a an the this that these those my your his her its our their me you him them us it he she ' +
    'they we to into onto in on at by of for from with without toward towards through across ' +
    'over under after before behind beside besides between beyond near around along against ' +
    'among upon within and or but nor so yet not no too very all both each every some any here ' +
    'there now yes'
  ).split(' '),
);

/** Adverbs in -ly's place that are verbs: "I fly" → "flies". */
const VERBS_IN_LY = new Set([
  'fly',
  'reply',
  'apply',
  'supply',
  'comply',
  'imply',
  'multiply',
  'rely',
  'ally',
  'rally',
  'tally',
  'bully',
  'sully',
  'dally',
]);

/** Adverbs that stand between the subject and its verb ("I never go"). */
const ADVERBS = new Set(
  'never always also then still just now often sometimes soon even only once twice almost already instead again'.split(
    ' ',
  ),
);

/** Whether `word` may stand between a subject and its verb without being the verb. */
export function isAdverb(word: string): boolean {
  const lower = word.toLowerCase();
  if (ADVERBS.has(lower)) return true;
  return /^[a-z]{3,}ly$/.test(lower) && !VERBS_IN_LY.has(lower);
}

/** `not` contracted onto the verbs whose third person differs. */
const NEGATED: Record<string, string> = { "don't": "doesn't", "haven't": "hasn't" };

/**
 * `word`, a verb after a first-person subject, in the third person singular: `draw` → `draws`,
 * `go` → `goes`, `try` → `tries`, `have` → `has`, `don't` → `doesn't`. Modals, past tense and
 * anything that is no plain lower-case verb come back unchanged.
 */
export function thirdPersonSingular(word: string): string {
  const apostrophe = word.includes('’') ? '’' : "'";
  const key = word.replace(/’/g, "'");
  if (NEGATED[key]) return NEGATED[key].replace("'", apostrophe);
  if (!/^[a-z]+$/.test(word)) return word;
  if (UNCHANGED.has(word) || IRREGULAR_PAST.has(word) || NOT_A_VERB.has(word)) return word;
  if (word.endsWith('ed') && !PRESENT_IN_ED.has(word)) return word;
  // Already in the third person ("runs"), unless the stem ends in s ("pass", "focus").
  if (/[^su]s$/.test(word)) return word;
  if (word === 'am') return 'is';
  if (word === 'have') return 'has';
  if (/(?:s|x|z|ch|sh|o)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}
