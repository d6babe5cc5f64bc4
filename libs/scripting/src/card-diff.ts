// Story cards after a hook, diffed by id against the snapshot the script was given (docs/scripting.md §3.3).
// Scripts edit the live array directly (property writes, push, splice, unshift), so the diff,
// not the card functions, is what Chronicle records: added, updated, removed, reordered.
import { forbiddenKey, isPlainObject, parseJson } from './json-safety';
import { SCRIPT_LIMITS } from './scripting.limits';
import type { CardOp, SandboxCard } from './scripting.types';

const TEXT_FIELDS = ['title', 'keys', 'type', 'entry', 'description'] as const;
type TextField = (typeof TEXT_FIELDS)[number];

export type CardDiff =
  | { kind: 'ok'; cards: SandboxCard[]; ops: CardOp[]; logs: string[] }
  | { kind: 'invalid'; error: string };

/** A field value as a string: arrays (keys) joined by commas, null/undefined empty. */
function fieldText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map((v) => fieldText(v)).join(',');
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * `json` is the harness's serialisation of `storyCards`. `newId` names a card pushed without
 * an id (or with one another card already has).
 */
export function diffCards(
  before: readonly SandboxCard[],
  json: string | undefined,
  newId: () => string,
  limits: { cards: number; fieldChars: number } = {
    cards: SCRIPT_LIMITS.cards,
    fieldChars: SCRIPT_LIMITS.cardFieldChars,
  },
): CardDiff {
  const parsed = parseJson(json);
  if (!parsed.ok) return { kind: 'invalid', error: 'storyCards could not be serialised' };
  if (!Array.isArray(parsed.value)) return { kind: 'invalid', error: 'storyCards is not an array' };
  if (parsed.value.length > limits.cards) {
    return { kind: 'invalid', error: `more than ${limits.cards} story cards` };
  }
  const bad = forbiddenKey(parsed.value);
  if (bad) return { kind: 'invalid', error: `a story card carries the forbidden key "${bad}"` };

  const logs: string[] = [];
  const previous = new Map(before.map((card) => [card.id, card]));
  const seen = new Set<string>();
  const cards: SandboxCard[] = [];
  const ops: CardOp[] = [];
  parsed.value.forEach((raw, index) => {
    if (!isPlainObject(raw)) {
      logs.push(`storyCards[${index}] is not an object and was dropped`);
      return;
    }
    let id = raw.id === undefined || raw.id === null ? '' : fieldText(raw.id);
    if (id === '' || seen.has(id)) id = newId();
    seen.add(id);
    const card: SandboxCard = { id, title: '', keys: '', type: '', entry: '', description: '' };
    for (const field of TEXT_FIELDS) {
      let text = fieldText(raw[field]);
      if (text.length > limits.fieldChars) {
        logs.push(`storyCards[${index}].${field} truncated to ${limits.fieldChars} characters`);
        text = text.slice(0, limits.fieldChars);
      }
      card[field] = text;
    }
    if (!previous.has(id) && card.type === '') card.type = 'Custom';
    if (typeof raw.useForCharacterCreation === 'boolean') {
      card.useForCharacterCreation = raw.useForCharacterCreation;
    }
    cards.push(card);
    const old = previous.get(id);
    if (!old) {
      ops.push({ op: 'added', card, index: cards.length - 1 });
      return;
    }
    const fields: Partial<Record<TextField, string>> = {};
    for (const field of TEXT_FIELDS) {
      if (card[field] !== old[field]) fields[field] = card[field];
    }
    if (Object.keys(fields).length > 0) ops.push({ op: 'updated', id, fields });
  });

  for (const card of before) {
    if (!seen.has(card.id)) ops.push({ op: 'removed', id: card.id });
  }
  // Reordered when the cards that survived, followed by the added ones, are not in this order.
  const kept = before.filter((card) => seen.has(card.id)).map((card) => card.id);
  const added = cards.filter((card) => !previous.has(card.id)).map((card) => card.id);
  const expected = [...kept, ...added];
  const actual = cards.map((card) => card.id);
  if (expected.some((id, i) => actual[i] !== id)) ops.push({ op: 'reordered', order: actual });
  return { kind: 'ok', cards, ops, logs };
}
