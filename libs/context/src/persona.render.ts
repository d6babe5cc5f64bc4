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
