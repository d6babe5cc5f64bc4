// Who is in a stretch of story, for the memory writer and the summarizer: the protagonist with
// pronouns (a model left to guess a pronoun repeats its guess in every memory), the cards that
// the stretch mentions, then other character cards. No live values: the same stretch is always
// framed the same way, so the brief stays cacheable.

import { mentionedCards, tokenizer, type StoryCard, type TokenEncoding } from '@chronicle/context';
import { CAST_ENTRY_CHARS, MAX_CAST_MEMBERS, SETTING_TOKENS } from './memory.constants';

export interface CastPersona {
  name: string;
  pronouns: string;
  description: string;
}

/** A story card as the prompt's lore reads it (its key syntax, matching and conditions count). */
export type CastCard = StoryCard;

export interface CastBriefInput {
  persona: CastPersona | null;
  cards: readonly CastCard[];
  plotEssentials: string;
  /** The text of the whole stretch being remembered or summarized. */
  storyText: string;
  encoding?: TokenEncoding;
}

// A pronoun is in every sentence: as a key it would match every stretch of story.
const PRONOUNS = new Set([
  'he', 'him', 'his', 'she', 'her', 'hers', 'they', 'them', 'their', 'theirs',
  'it', 'its', 'you', 'your', 'i', 'me', 'my', 'we', 'us', 'our', 'xe', 'xem', 'ze', 'zir',
]); // prettier-ignore

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `text` cut to `max` characters on a word boundary, ending in "…" when cut. */
export function cutOnWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const room = text.slice(0, max - 1);
  const space = room.lastIndexOf(' ');
  return `${(space > 0 ? room.slice(0, space) : room).trimEnd()}…`;
}

function entryLine(name: string, description: string): string {
  const line = description ? `${name} — ${description}` : name;
  return cutOnWord(oneLine(line), CAST_ENTRY_CHARS);
}

/** The "Cast:" and "Setting:" blocks, or '' when there is nothing to say. */
export function castBrief(input: CastBriefInput): string {
  const persona = input.persona;
  const personaName = oneLine(persona?.name ?? '');
  const pronouns = oneLine(persona?.pronouns ?? '');
  const description = oneLine(persona?.description ?? '');
  const seen = new Set<string>();
  const lines: string[] = [];
  const add = (name: string, text: string): void => {
    const key = name.toLowerCase();
    if (lines.length >= MAX_CAST_MEMBERS || key === '' || seen.has(key)) return;
    seen.add(key);
    lines.push(entryLine(name, text));
  };

  // The cards the stretch mentions, by the rule the prompt's lore fires them by (not the seed's
  // comma split, which trims AI Dungeon's guard keys, splits a one-per-line key on its commas and
  // matches a regex key as its text), pronoun keys left out.
  const matched = mentionedCards(input.cards, input.storyText, PRONOUNS).map((match) => ({
    ...match,
    name: oneLine(match.name),
  }));
  const cards = input.cards.map((card) => ({ ...card, name: oneLine(card.name) }));
  const hasPersona = personaName !== '' || description !== '';
  const characters = cards.filter((card) => card.type === 'character');
  if (hasPersona || matched.length > 0 || characters.length > 0) {
    const who = personaName ? `${personaName}${pronouns ? ` (${pronouns})` : ''}` : 'The player';
    const head = `${who} — the protagonist.${description ? ` ${description}` : ''}`;
    seen.add((personaName || 'the player').toLowerCase());
    lines.push(cutOnWord(head, CAST_ENTRY_CHARS));
    for (const match of matched) add(match.name, oneLine(match.entry));
    for (const card of characters) add(card.name, oneLine(card.entry));
  }

  const blocks: string[] = [];
  if (lines.length > 0) blocks.push(`Cast:\n${lines.map((line) => `- ${line}`).join('\n')}`);
  const essentials = input.plotEssentials.trim();
  if (essentials) {
    const setting = tokenizer(input.encoding).lastTokens(essentials, SETTING_TOKENS).trim();
    blocks.push(`Setting:\n${setting}`);
  }
  return blocks.join('\n\n');
}
