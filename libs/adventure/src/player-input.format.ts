// Player input becomes story text the way the predecessor wrote it, so a story played
// here reads like one played there and the model sees the same second-person turns.

import { InvalidCommandError } from './adventure.errors';
import type { InputType } from './adventure.events';
import { namesItsActor, toSecondPerson } from './player-input.person';
import { type ActingCharacter, toThirdPerson } from './player-input.third-person';

/** An end mark, maybe inside a closing quote or bracket: `run.`, `"Run!"`. */
const ENDS_A_SENTENCE = /[.!?…]["”’)]*$/;
const QUOTES = /^["“”]+|["“”]+$/g;
const LEADING_YOU = /^you(\s+|$)/i;
/** "Tom and I …": the player named who acts, and the verb stays plural. */
const SHARED_SUBJECT_FIRST = /^(?:(?:the|a|an)\s+)?\S+\s+(?:and|or)\s+(?:I|me)\b/i;
/** One quotation and nothing else: `"Halt!"`, `“Who goes there?”`. */
const ONLY_DIALOGUE = /^["“][^"“”]*["”]$/;

function withFinalPeriod(text: string): string {
  return ENDS_A_SENTENCE.test(text) ? text : `${text}.`;
}

/**
 * `walk north` and `Walk north` both read `> You walk north.`: a do-action starts with a verb,
 * capitalised only because it began the input. A first word that is capitalised elsewhere
 * (`I`, `I'm`, `NASA`, `McGuffin`) is kept as written.
 */
function lowerInitialVerb(text: string): string {
  const firstWord = /^\S+/.exec(text)?.[0] ?? '';
  const rest = firstWord.slice(1);
  const isPlainCapitalised = /^[A-Z]$/.test(firstWord[0] ?? '') && rest === rest.toLowerCase();
  if (!isPlainCapitalised || /^I(\b|')/.test(firstWord)) return text;
  return text[0].toLowerCase() + text.slice(1);
}

/**
 * The story text of a player's input, or null for `continue` (which writes no player action).
 * With no `actor` (a one-player adventure) it is about "you", as the predecessor writes it; in
 * a room it is about the acting player's character by name (`> Mira draws her sword.`).
 * Throws InvalidCommandError when nothing is left to write.
 */
export function formatPlayerInput(
  type: InputType,
  text: string,
  actor?: ActingCharacter | null,
): string | null {
  switch (type) {
    case 'continue':
      return null;
    case 'story':
      if (text.trim() === '') throw emptyInput(type);
      return text;
    case 'say': {
      const spoken = text.trim().replace(QUOTES, '').trim();
      if (spoken === '') throw emptyInput(type);
      return actor
        ? `> ${actor.name} says, "${withFinalPeriod(spoken)}"`
        : `> You say "${withFinalPeriod(spoken)}"`;
    }
    case 'do':
      return `> ${withFinalPeriod(actor ? thirdPersonDoText(text, actor) : doActionText(text))}`;
  }
}

/**
 * A do-action about "you": `You` goes in front unless the player already named who acts
 * (dialogue first, `I`, `My`, `You`), and first-person words outside quotes become second person.
 */
function doActionText(text: string): string {
  const trimmed = text.trim();
  const deed = trimmed.replace(LEADING_YOU, '').trim();
  if (deed === '') throw emptyInput('do');
  if (deed === trimmed && namesItsActor(deed)) {
    const converted = toSecondPerson(deed);
    return converted[0].toUpperCase() + converted.slice(1);
  }
  return toSecondPerson(`You ${lowerInitialVerb(deed)}`);
}

/**
 * A do-action about `actor` by name: written as if the player had begun it with "I" unless they
 * named who acts (`I`, `My`, dialogue first), so its verb agrees (`draw` → `Mira draws`). A
 * do that is only dialogue is the character saying it.
 */
function thirdPersonDoText(text: string, actor: ActingCharacter): string {
  const trimmed = text.trim();
  const deed = trimmed.replace(LEADING_YOU, '').trim();
  if (deed === '') throw emptyInput('do');
  if (deed === trimmed && ONLY_DIALOGUE.test(deed)) return `${actor.name} says, ${deed}`;
  const own = deed === trimmed && (namesItsActor(deed) || SHARED_SUBJECT_FIRST.test(deed));
  const converted = toThirdPerson(own ? deed : `I ${lowerInitialVerb(deed)}`, actor);
  return converted[0].toUpperCase() + converted.slice(1);
}

function emptyInput(type: InputType): InvalidCommandError {
  return new InvalidCommandError(
    `text is empty for a ${type} action; write what happens, or send type "continue" to let the narrator go on`,
  );
}

const PLACEHOLDER = /\$\{([^}]*)\}/g;

/** The placeholder names in `template`, in order of first appearance. */
export function placeholderNames(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (!names.includes(match[1])) names.push(match[1]);
  }
  return names;
}

/** `template` with every `${Name}` replaced by its answer; a missing answer is an error. */
export function fillPlaceholders(template: string, answers: Record<string, string>): string {
  const has = (name: string) => Object.prototype.hasOwnProperty.call(answers, name);
  const missing = placeholderNames(template).filter((name) => !has(name));
  if (missing.length > 0) {
    throw new InvalidCommandError(
      `placeholders need answers: ${missing.map((name) => JSON.stringify(name)).join(', ')}; send them in "placeholders"`,
    );
  }
  return template.replace(PLACEHOLDER, (_whole, name: string) => answers[name]);
}
