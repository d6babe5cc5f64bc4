// Macros in card entries (and keys), substituted when the prompt is built, never at import, so
// an imported book's text round-trips unchanged. SillyTavern's and the Character Card V3
// spec's spellings; anything else is left as text (and reported at import, see `unknownMacros`).

export interface MacroContext {
  /** `{{user}}`: the player character's name. */
  user: string;
  /** `{{char}}`: the card's character (`charName`) or the narrator. */
  char: string;
  /** Seeds `{{random}}` and `{{roll}}`: the turn and the card, so a rebuild draws the same. */
  turnSeed: string;
  /** Seeds `{{pick}}`: the card alone, so a pick stays the same from turn to turn. */
  cardSeed: string;
}

const MACRO = /\{\{(\/\/[\s\S]*?|[^{}]*)\}\}/g;
const KNOWN = /^(user|char|random|pick|roll|comment|hidden_key|\/\/|trim|newline|noop)\b/i;

/** Whether rendering `text` depends on the turn (so it cannot sit in the cached static block). */
export function dependsOnTurn(text: string): boolean {
  return /\{\{\s*(random|roll)\s*[:}]/i.test(text);
}

/** The macros of `text` this renderer does not know, as written (for the import report). */
export function unknownMacros(text: string): string[] {
  const unknown = new Set<string>();
  for (const match of text.matchAll(MACRO)) {
    const body = match[1].trim();
    if (!KNOWN.test(body)) unknown.add(match[0]);
  }
  return [...unknown];
}

/** The text `{{hidden_key:…}}` macros hold: scanned for keys in recursion, never sent. */
export function hiddenKeyText(text: string): string {
  const parts: string[] = [];
  for (const match of text.matchAll(/\{\{\s*hidden_key\s*:([^{}]*)\}\}/gi)) parts.push(match[1]);
  return parts.join('\n');
}

export function renderMacros(text: string, context: MacroContext): string {
  if (!text.includes('{{')) return text;
  let draw = 0;
  return text.replace(MACRO, (whole, rawBody: string) => {
    const body = rawBody.trim();
    if (body.startsWith('//')) return '';
    const colon = body.indexOf(':');
    const name = (colon < 0 ? body : body.slice(0, colon)).trim().toLowerCase();
    const argument = colon < 0 ? '' : body.slice(colon + 1);
    switch (name) {
      case 'user':
        return context.user;
      case 'char':
        return context.char;
      case 'comment':
      case 'hidden_key':
      case 'noop':
        return '';
      case 'newline':
        return '\n';
      case 'trim':
        return '';
      case 'random':
      case 'pick': {
        const options = splitOptions(argument);
        if (options.length === 0) return '';
        const seed = name === 'pick' ? context.cardSeed : context.turnSeed;
        return options[Math.floor(seeded(`${seed}#${draw++}`) * options.length)];
      }
      case 'roll': {
        const sides = Number.parseInt(argument.trim().replace(/^d/i, ''), 10);
        if (!Number.isFinite(sides) || sides < 1) return whole;
        return String(1 + Math.floor(seeded(`${context.turnSeed}#${draw++}`) * sides));
      }
      default:
        return whole;
    }
  });
}

/** `a,b` or `a::b` (SillyTavern's two spellings), `\,` keeping a literal comma. */
function splitOptions(argument: string): string[] {
  const parts = argument.includes('::')
    ? argument.split('::')
    : argument.split(/(?<!\\),/).map((option) => option.replace(/\\,/g, ','));
  return parts.map((option) => option.trim());
}

/** A number in [0, 1) from a string: FNV-1a into mulberry32. Same string, same number. */
export function seeded(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  let t = (hash + 0x6d2b79f5) | 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
