// Which story cards fire on a turn, and what of them the prompt gets: the lore's half of the
// context builder, kept apart from the builder so the builder only places what this returns.
//
// For the seed's cards (no field beyond name, keys, entry, type) this is the seed's rule: keys
// split on commas and trimmed, a case-insensitive substring of the whole trigger window, card
// order, one record per card naming its first matching key, a card that does not fit the lore
// budget skipped. Imported books add (see StoryCard): key syntaxes, always-on and inert cards,
// priority, per-card windows, case and whole-word matching, regex keys, secondary-key
// conditions, recursion and depth placement.

import type { CardMiss, CardRecord, StoryCard, TimedLoreFiring } from '../context.types';
import {
  DEFAULT_PRIORITY,
  byPriorityThenOrder,
  compileLore,
  hasTimer,
  inRenderOrder,
  isStaticCard,
  type CompiledCard,
  type CompiledLore,
} from './lore.compile';
import { MAX_REPORTED_MISSES, drawChances, timedClock, type Fired } from './lore.draws';
import { candidates, evaluate, scan } from './lore.match';
import { hiddenKeyText, renderMacros, type MacroContext } from './lore.macros';
import { budgetTokens, trimToFit, type TokenCut } from './lore.trim';

export { DEFAULT_PRIORITY, MAX_REPORTED_MISSES, compileLore, isStaticCard, type CompiledLore };
export { mentionedCards } from './lore.match';

/** Recursion steps after the story's own scan (SillyTavern's are unbounded; a book's loop is not). */
export const MAX_LORE_RECURSION = 5;
const LORE_PREFIX = 'World Lore: ';

/** The trigger window: the texts history could fill, oldest first (the builder's cut). */
export interface LoreWindow {
  parts: readonly string[];
}

export interface LoreTurn {
  /** `{{user}}`. */
  user: string;
  /** Seeds the random macros (see ContextHead.loreSeed). */
  seed: string;
  /** Tokens the live lore may take. */
  budget: number;
  /** Story actions on the path (timed effects count them); absent = no timed effect holds back. */
  storyActions?: number;
  /** Earlier turns' firings of cards with sticky or cooldown (ContextHead.timedLore). */
  timed?: readonly TimedLoreFiring[];
  /** The context budget, which a card budget's shares are of (default: `budget`). */
  contextTokens?: number;
  /** Cuts an entry to fit its card budget (CardBudget.trim); absent, no entry is cut. */
  cut?: Omit<TokenCut, 'countTokens'>;
  countTokens(text: string): number;
}

export interface DepthLore {
  depth: number;
  role: 'system' | 'user' | 'assistant';
  text: string;
  tokens: number;
}

/** An entry placed beside the author's note. */
export interface AuthorsNoteLore {
  edge: 'top' | 'bottom';
  text: string;
  tokens: number;
}

export interface ActivatedLore {
  /** The live "World Lore" lines, in render order. */
  lines: { text: string; tokens: number }[];
  /** Entries placed inside the history. */
  depth: DepthLore[];
  /** Entries placed beside the author's note, in render order. */
  authorsNote: AuthorsNoteLore[];
  /** Tokens of both, as budgeted. */
  tokens: number;
  records: CardRecord[];
  misses: CardMiss[];
  /** The cards sent whose sticky or cooldown starts on this turn (ContextReport.timedLore). */
  timedStarts: string[];
}

function macroContext(card: StoryCard, turn: Pick<LoreTurn, 'user' | 'seed'>): MacroContext {
  return {
    user: turn.user,
    char: card.charName ?? 'the narrator',
    turnSeed: `${turn.seed}|${card.id}`,
    cardSeed: card.id,
  };
}

/** The line a fired card adds to a lore block. */
export function loreLine(card: StoryCard, turn: Pick<LoreTurn, 'user' | 'seed'>): string {
  return `${LORE_PREFIX}${renderMacros(card.entry, macroContext(card, turn)).trim()}`;
}

/**
 * What a card sends within `room` tokens (the lore budget left): its line (or, placed in the
 * history or beside the note, its bare entry) whole, or cut as its CardBudget allows, or null
 * when it does not fit. A card's own `maxTokens` narrows the room.
 */
function fitEntry(
  card: StoryCard,
  bare: boolean,
  room: number,
  turn: Pick<LoreTurn, 'user' | 'seed' | 'countTokens' | 'contextTokens' | 'cut' | 'budget'>,
): { text: string; tokens: number; trimmed: boolean } | null {
  const body = renderMacros(card.entry, macroContext(card, turn)).trim();
  const wrap = (text: string) => (bare ? text : `${LORE_PREFIX}${text}`);
  const text = wrap(body);
  const tokens = turn.countTokens(text);
  const limit = Math.min(
    room,
    budgetTokens(card.budget?.maxTokens, turn.contextTokens ?? turn.budget),
  );
  if (tokens <= limit) return { text, tokens, trimmed: false };
  if (!turn.cut || !card.budget) return null;
  const overhead = bare ? 0 : turn.countTokens(LORE_PREFIX);
  const tokenCut = turn.cut;
  const cut = trimToFit(body, limit - overhead, card.budget, {
    countTokens: turn.countTokens,
    firstTokens: (t, n) => tokenCut.firstTokens(t, n),
    lastTokens: (t, n) => tokenCut.lastTokens(t, n),
  });
  if (cut === '') return null;
  const trimmed = wrap(cut);
  const cost = turn.countTokens(trimmed);
  return cost <= limit ? { text: trimmed, tokens: cost, trimmed: true } : null;
}

/** Reserved cards (CardBudget.reservedTokens) are budgeted before the others. */
function isReserved(card: StoryCard): boolean {
  return (card.budget?.reservedTokens ?? 0) > 0;
}

/**
 * The always-on cards of the static block, highest priority first into `budget`, rendered
 * lowest first (the highest sits closest to the story), as one text.
 */
export function staticLore(
  cards: readonly StoryCard[],
  turn: Pick<LoreTurn, 'user' | 'seed' | 'countTokens' | 'budget' | 'contextTokens' | 'cut'>,
): { text: string; records: CardRecord[] } {
  const chosen = cards
    .map((card, index) => ({ card, index, primary: [], conditions: [] }) as CompiledCard)
    .filter(({ card }) => isStaticCard(card))
    .sort(
      (a, b) =>
        Number(isReserved(b.card)) - Number(isReserved(a.card)) || byPriorityThenOrder(a, b),
    );
  if (chosen.length === 0) return { text: '', records: [] };
  const kept: { entry: CompiledCard; line: string }[] = [];
  const records: CardRecord[] = [];
  let spent = 0;
  for (const entry of chosen) {
    const fit = fitEntry(entry.card, false, turn.budget - spent, turn);
    if (fit) {
      kept.push({ entry, line: fit.text });
      spent += fit.tokens;
    }
    records.push({
      id: entry.card.id,
      name: entry.card.name,
      keyword: '',
      included: fit !== null,
      reason: 'always',
      placement: 'static',
      ...(fit?.trimmed && { trimmed: true }),
    });
  }
  kept.sort((a, b) => inRenderOrder(a.entry, b.entry));
  return { text: kept.map((k) => k.line).join('\n'), records };
}

/**
 * The cards that fire on `window`, budgeted: highest priority first into `turn.budget`, a card
 * that does not fit skipped (a later, smaller one may fit), rendered lowest priority first.
 * Static cards are not here (see `staticLore`).
 */
// eslint-disable-next-line max-lines-per-function -- the scan's stages in SillyTavern's order (sticky, always, keys, recursion, delay, chance, budget, placement), each reading what the one before left; the order is the algorithm
export function activateLore(
  cards: readonly StoryCard[],
  window: LoreWindow,
  turn: LoreTurn,
): ActivatedLore {
  const empty: ActivatedLore = {
    lines: [],
    depth: [],
    authorsNote: [],
    tokens: 0,
    records: [],
    misses: [],
    timedStarts: [],
  };
  if (cards.length === 0) return empty;
  const lore = compileLore(cards);
  const fired: Fired[] = [];
  const done = new Set<CompiledCard>();
  const misses: CardMiss[] = [];
  const story = scan(lore, window.parts);
  const clock = timedClock(lore, turn.timed);
  /** Whether a card that would fire now is still cooling down (reported as a miss). */
  const cooling = (entry: CompiledCard): boolean => {
    if (clock.get(entry) !== 'cooldown') return false;
    if (misses.length < MAX_REPORTED_MISSES) {
      misses.push({ id: entry.card.id, name: entry.card.name, reason: 'cooldown' });
    }
    return true;
  };

  // Sticky cards first: they stay whatever the story says (SillyTavern's sticky).
  for (const [entry, state] of clock) {
    if (state !== 'sticky') continue;
    fired.push({ entry, keyword: '', reason: 'sticky' });
    done.add(entry);
  }
  for (const index of lore.alwaysCards) {
    const entry = lore.cards[index];
    if (done.has(entry) || cooling(entry)) continue;
    fired.push({ entry, keyword: '', reason: 'always' });
    done.add(entry);
  }
  for (const index of candidates(lore, story)) {
    const entry = lore.cards[index];
    if (done.has(entry) || (entry.card.recursion?.delayLevel ?? 0) > 0) continue;
    const outcome = evaluate(entry, story, false);
    if (outcome.fired) {
      if (cooling(entry)) continue;
      fired.push({ entry, keyword: outcome.keyword });
      done.add(entry);
    } else if (outcome.miss && misses.length < MAX_REPORTED_MISSES) {
      misses.push({ id: entry.card.id, name: entry.card.name, ...outcome.miss });
    }
  }

  // Recursion: the entries just fired are scanned for the keys of the cards that have not.
  let feeding = fired.filter((f) => f.entry.card.recursion?.feedsOthers);
  for (let step = 1; step <= MAX_LORE_RECURSION && feeding.length > 0; step++) {
    const buffer = scan(
      lore,
      feeding.map((f) => {
        const rendered = renderMacros(f.entry.card.entry, macroContext(f.entry.card, turn));
        const hidden = hiddenKeyText(f.entry.card.entry);
        return hidden ? `${rendered}\n${hidden}` : rendered;
      }),
    );
    const next: Fired[] = [];
    for (const index of candidates(lore, buffer)) {
      const entry = lore.cards[index];
      const recursion = entry.card.recursion;
      if (done.has(entry) || !recursion?.triggeredByOthers || entry.primary.length === 0) continue;
      if ((recursion.delayLevel ?? 0) > step) continue;
      const outcome = evaluate(entry, buffer, true);
      if (outcome.fired && !cooling(entry)) {
        next.push({ entry, keyword: outcome.keyword, reason: 'recursion', step });
        done.add(entry);
      }
    }
    fired.push(...next);
    feeding = next.filter((f) => f.entry.card.recursion?.feedsOthers);
  }

  // Timed effects, from the path's own length.
  const timely = fired.filter((f) => {
    const delay = f.reason === 'sticky' ? 0 : (f.entry.card.timing?.delay ?? 0);
    if (turn.storyActions === undefined || turn.storyActions >= delay) return true;
    if (misses.length < MAX_REPORTED_MISSES) {
      misses.push({
        id: f.entry.card.id,
        name: f.entry.card.name,
        reason: 'delay',
        detail: `fires from action ${delay}; the story has ${turn.storyActions}`,
      });
    }
    return false;
  });
  // Chance and inclusion groups, drawn from the turn's seed: the same turn draws the same.
  const kept = drawChances(timely, turn.seed, misses);

  // Budget: highest priority first; equal priorities in card order (the seed's order).
  // Reserved cards first (NovelAI's reservations displace the others), then the rest.
  const ranked = kept
    .slice()
    .sort(
      (a, b) =>
        Number(isReserved(b.entry.card)) - Number(isReserved(a.entry.card)) ||
        byPriorityThenOrder(a.entry, b.entry),
    );
  const placed: { fired: Fired; text: string; tokens: number }[] = [];
  const included = new Set<Fired>();
  const trimmed = new Set<Fired>();
  let tokens = 0;
  for (const f of ranked) {
    const bare = (f.entry.card.placement?.kind ?? 'lore') !== 'lore';
    const fit = fitEntry(f.entry.card, bare, turn.budget - tokens, turn);
    if (fit) {
      placed.push({ fired: f, text: fit.text, tokens: fit.tokens });
      included.add(f);
      if (fit.trimmed) trimmed.add(f);
      tokens += fit.tokens;
    }
  }
  // Render lowest priority first, so the highest sits closest to the story's end.
  placed.sort((a, b) => inRenderOrder(a.fired.entry, b.fired.entry));
  const lines: ActivatedLore['lines'] = [];
  const depth: DepthLore[] = [];
  const authorsNote: AuthorsNoteLore[] = [];
  for (const k of placed) {
    const placement = k.fired.entry.card.placement;
    if (placement?.kind === 'authorsNote') {
      authorsNote.push({ edge: placement.edge ?? 'bottom', text: k.text, tokens: k.tokens });
    } else if (placement?.kind === 'depth') {
      depth.push({
        depth: Math.max(0, placement.depth ?? 4),
        role: placement.role ?? 'system',
        text: k.text,
        tokens: k.tokens,
      });
    } else {
      lines.push({ text: k.text, tokens: k.tokens });
    }
  }

  // Records in firing order (for the seed's cards: card order), as the seed's report had them.
  const records: CardRecord[] = kept
    .slice()
    .sort((a, b) => (a.step ?? 0) - (b.step ?? 0) || a.entry.index - b.entry.index)
    .map((f) => {
      const record: CardRecord = {
        id: f.entry.card.id,
        name: f.entry.card.name,
        keyword: f.keyword,
        included: included.has(f),
      };
      if (f.reason) record.reason = f.reason;
      if (f.step !== undefined) record.step = f.step;
      if (trimmed.has(f)) record.trimmed = true;
      const kind = f.entry.card.placement?.kind;
      if (kind === 'depth' || kind === 'authorsNote') record.placement = kind;
      return record;
    });
  const timedStarts = placed
    .filter((k) => k.fired.reason !== 'sticky' && hasTimer(k.fired.entry.card))
    .map((k) => k.fired.entry.card.id);
  return { lines, depth, authorsNote, tokens, records, misses, timedStarts };
}
