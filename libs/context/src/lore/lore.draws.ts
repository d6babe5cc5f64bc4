// What a fired card's timers and chances decide: the sticky and cooling cards of a turn (from
// the path's firings) and the probability draws and inclusion groups, seeded by the turn.

import type { CardMiss, CardRecord, TimedLoreFiring } from '../context.types';
import {
  byPriorityThenOrder,
  hasTimer,
  type CompiledCard,
  type CompiledLore,
} from './lore.compile';
import { seeded } from './lore.macros';

/** Cards the report lists as not fired, at most (a 5,000-card book must not flood it). */
export const MAX_REPORTED_MISSES = 100;

export interface Fired {
  entry: CompiledCard;
  keyword: string;
  reason?: CardRecord['reason'];
  step?: number;
}

/**
 * Each compiled card a timed effect holds on this turn: `sticky` while the story is at most
 * `sticky` actions past its latest firing, then `cooldown` for `cooldown` more. Only cards with
 * a timer and a firing on the path are looked up, so a book without timers pays nothing.
 */
export function timedClock(
  lore: CompiledLore,
  timed: readonly TimedLoreFiring[] | undefined,
): Map<CompiledCard, 'sticky' | 'cooldown'> {
  const clock = new Map<CompiledCard, 'sticky' | 'cooldown'>();
  if (!timed || timed.length === 0) return clock;
  const latest = new Map<string, number>();
  for (const { cardId, ago } of timed) {
    if (ago >= 1 && ago < (latest.get(cardId) ?? Infinity)) latest.set(cardId, ago);
  }
  for (const entry of lore.cards) {
    const ago = latest.get(entry.card.id);
    if (ago === undefined || !hasTimer(entry.card)) continue;
    const sticky = entry.card.timing?.sticky ?? 0;
    const cooldown = entry.card.timing?.cooldown ?? 0;
    if (ago <= sticky) clock.set(entry, 'sticky');
    else if (ago <= sticky + cooldown) clock.set(entry, 'cooldown');
  }
  return clock;
}

/**
 * The fired cards that survive their probability draw and their inclusion groups. Draws are
 * `seeded(turn seed, card id, purpose)`: independent of which other cards fired, so one card's
 * edit does not re-roll another's.
 */
export function drawChances(fired: Fired[], seed: string, misses: CardMiss[]): Fired[] {
  const miss = (f: Fired, reason: CardMiss['reason'], detail?: string) => {
    if (misses.length < MAX_REPORTED_MISSES) {
      misses.push({
        id: f.entry.card.id,
        name: f.entry.card.name,
        reason,
        ...(detail && { detail }),
      });
    }
  };
  const lucky = fired.filter((f) => {
    const p = f.entry.card.probability ?? 100;
    // A sticky card drew when it fired; it does not draw again while it stays.
    if (p >= 100 || f.reason === 'sticky') return true;
    const kept = seeded(`${seed}|${f.entry.card.id}|probability`) * 100 < p;
    if (!kept) miss(f, 'probability', `${p}%`);
    return kept;
  });
  const groups = new Map<string, Fired[]>();
  for (const f of lucky) {
    for (const name of f.entry.card.group?.names ?? []) {
      const members = groups.get(name) ?? [];
      members.push(f);
      groups.set(name, members);
    }
  }
  if (groups.size === 0) return lucky;
  const losers = new Set<Fired>();
  for (const [name, members] of groups) {
    if (members.length < 2) continue;
    const overrides = members.filter((f) => f.entry.card.group?.override);
    const sticky = members.find((f) => f.reason === 'sticky');
    let winner: Fired;
    if (sticky) {
      // SillyTavern: a sticky member keeps its group.
      winner = sticky;
    } else if (overrides.length > 0) {
      winner = overrides.sort((a, b) => byPriorityThenOrder(a.entry, b.entry))[0];
    } else {
      const weights = members.map((f) => Math.max(0, f.entry.card.group?.weight ?? 100));
      const total = weights.reduce((sum, w) => sum + w, 0);
      let roll = seeded(`${seed}|group|${name}`) * total;
      winner = members[members.length - 1];
      for (let i = 0; i < members.length; i++) {
        roll -= weights[i];
        if (roll < 0) {
          winner = members[i];
          break;
        }
      }
    }
    for (const f of members) if (f !== winner) losers.add(f);
  }
  for (const f of losers) miss(f, 'group', f.entry.card.group!.names.join(', '));
  return lucky.filter((f) => !losers.has(f));
}
