import type { Persona } from './context.types';

/**
 * The Player Character section, or '' when there is no persona.
 *
 * The three fields are independent. A name alone is enough, a description alone is enough, and
 * the wording holds together for either. Pronouns are stated because the summarizer in the
 * memory bank writes about the protagonist in the third person, and a model that has to infer
 * a pronoun from a name will sometimes infer wrongly and then repeat that error in every memory
 * it writes.
 */
export function renderPersona(persona: Persona | null | undefined): string {
  const name = (persona?.name ?? '').trim();
  const pronouns = (persona?.pronouns ?? '').trim();
  const description = (persona?.description ?? '').trim();
  if (!name && !description) return '';
  let head = name ? `You are ${name}` : '';
  if (head && pronouns) head += ` (${pronouns})`;
  // Joined with a space, not the section separator: this is one short paragraph about one
  // character, and a blank line inside it reads as two unrelated notes.
  const body = [head ? `${head}.` : '', description].filter((part) => part).join(' ');
  return `Player character:\n${body}`;
}

/** `Mira`, `Mira and Bo`, `Mira, Bo and Tal`. */
function namesInProse(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/**
 * The player section of a room (docs/multiplayer.md §3.2), or '' with no named character: every
 * active player's character, how their actions read, and that the narrator acts and speaks for
 * none of them. A narrator that writes one player's character's deeds or words takes that
 * player's turn away, and with several players in the story a model does so readily.
 */
export function renderPlayers(players: readonly Persona[]): string {
  const named = players
    .map((player) => ({
      name: player.name.trim(),
      pronouns: player.pronouns.trim(),
      description: player.description.trim(),
    }))
    .filter((player) => player.name !== '');
  if (named.length === 0) return '';
  const lines = named.map(
    ({ name, pronouns, description }) =>
      `- ${name}${pronouns ? ` (${pronouns})` : ''}${description ? `: ${description}` : ''}`,
  );
  const names = namesInProse(named.map((player) => player.name));
  const first = named[0].name;
  return [
    `Player characters (each played by a different person):`,
    ...lines,
    `A player's action names their character ("> ${first} draws a sword.", "> ${first} says, \\"…\\"").` +
      ` Narrate what happens in answer. Never act, speak or decide for ${names}: what they do and say is their players' to write.`,
  ].join('\n');
}
