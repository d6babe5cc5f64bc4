// Story-card trigger matching against a 16k-token trigger window, for books of 100 to 25,000
// cards: the seed's matcher (`matchCards`: one `includes` per key over the lower-cased window)
// against the lore activation the builder runs now (`activateLore`: one automaton pass over the
// window for every key, then windows, conditions, budget and rendering of what fired).
//
// "warm" is a turn in play: the book is unchanged since the last turn and the card list is a
// fresh array of the projection's card objects. "reloaded" is the same book as new objects
// (found by a content fingerprint). "cold" is the first turn after the book changed: the
// automaton is built. Keys are invented names, two per card, about 1% of
// them present in the window, as in a big book where a scene touches a few dozen entries.
import * as os from 'node:os';
import { activateLore, compileLore, matchCards, type StoryCard } from '@chronicle/context';
import { aStory } from '../libs/context/src/testing';
import { ms, summarize, timeRuns } from './stats';

const SIZES = [100, 200, 1_000, 5_000, 25_000];
const WINDOW_TOKENS = 16_384;
const TARGET_CARDS = 25_000;
const TARGET_P50_MS = 30;
const COMPARE_CARDS = 200;

function syllableName(i: number): string {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ren',
    'tor',
    'vu',
    'sel',
    'an',
    'dri',
    'oth',
    'bel',
    'quin',
  ];
  let n = i + 1;
  let name = '';
  while (n > 0) {
    name += syllables[n % syllables.length];
    n = Math.floor(n / syllables.length);
  }
  return name.charAt(0).toUpperCase() + name.slice(1);
}

function windowParts(): string[] {
  const story = aStory(2_000, { seed: 7 });
  const parts: string[] = [];
  let tokens = 0;
  for (let i = story.length - 1; i >= 0 && tokens < WINDOW_TOKENS; i--) {
    parts.unshift(story[i].text);
    tokens += story[i].tokens + 1;
  }
  return parts;
}

function book(count: number, parts: string[]): StoryCard[] {
  const cards: StoryCard[] = Array.from({ length: count }, (_, i) => ({
    id: `card-${i}`,
    name: syllableName(i),
    keys: `${syllableName(i)}, the ${syllableName(i + count)} keeper`,
    entry: `${syllableName(i)} is entry ${i} of the book.`,
    type: 'character',
  }));
  // Put about 1% of the names into the window, spread through it.
  const present = Math.max(1, Math.floor(count / 100));
  for (let j = 0; j < present; j++) {
    const at = Math.floor((j / present) * parts.length);
    parts[at] = `${parts[at]} ${cards[Math.floor((j * count) / present)].name} nods.`;
  }
  return cards;
}

export default async function run(): Promise<string> {
  const loadBefore = os.loadavg()[0];
  const rows: {
    count: number;
    old: number;
    warm: number;
    reloaded: number;
    cold: number;
    fired: number;
    same: boolean;
  }[] = [];
  for (const count of SIZES) {
    const parts = windowParts();
    const cards = book(count, parts);
    const text = parts.join('\n\n');
    const turn = {
      user: 'Ada',
      seed: 't',
      budget: 1_000_000,
      countTokens: (t: string) => t.length,
    };
    const runs = count >= 25_000 ? 15 : count >= 5_000 ? 30 : 60;
    // The seed matcher takes seconds at the top sizes: fewer runs of it, the same of ours.
    const old = await timeRuns(count >= 5_000 ? 5 : runs, () => matchCards(cards, text), 1);
    const warm = await timeRuns(runs, () => activateLore(cards.slice(), { parts }, turn), 3);
    const reloaded = await timeRuns(
      Math.max(5, Math.floor(runs / 3)),
      () =>
        activateLore(
          cards.map((c) => ({ ...c })),
          { parts },
          turn,
        ),
      2,
    );
    const coldRuns: number[] = [];
    for (let i = 0; i < Math.max(3, Math.floor(runs / 5)); i++) {
      // A changed book: one key differs, so the compiled one cannot be reused.
      const changed = cards.map((c, k) => (k === 0 ? { ...c, keys: `${c.keys}, v${i}` } : c));
      const start = process.hrtime.bigint();
      compileLore(changed);
      coldRuns.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    const fired = activateLore(cards, { parts }, turn).records.map((r) => r.id);
    const seed = matchCards(cards, text).map((m) => m.id);
    rows.push({
      count,
      old: old.p50,
      warm: warm.p50,
      reloaded: reloaded.p50,
      cold: summarize(coldRuns).p50,
      fired: fired.length,
      same: JSON.stringify(fired) === JSON.stringify(seed),
    });
  }
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
  const target = rows.find((r) => r.count === TARGET_CARDS)!;
  const compare = rows.find((r) => r.count === COMPARE_CARDS)!;
  return [
    `## Lore trigger matching (${WINDOW_TOKENS}-token window)`,
    '',
    '| cards | fired | seed matcher p50 | lore activation p50 (warm) | seed ÷ lore | reloaded p50 | compile (cold) p50 | same cards fired |',
    '|---:|---:|---:|---:|---:|---:|---:|:---:|',
    ...rows.map(
      (r) =>
        `| ${r.count} | ${r.fired} | ${ms(r.old)} | ${ms(r.warm)} | ${(r.old / r.warm).toFixed(1)}× | ${ms(r.reloaded)} | ${ms(r.cold)} | ${r.same ? 'yes' : 'NO'} |`,
    ),
    '',
    'Warm: a turn on an unchanged book as the worker runs it (a fresh card array of the',
    "projection's card objects; the compiled book is found by them). Reloaded: the same book as",
    'new objects (a projection decoded from a snapshot): found by its content fingerprint, which',
    'is inside the timing. Cold: compiling a changed book, paid once per change. All columns run',
    'in the same process, one after the other. The 1-minute load',
    `average was ${loadBefore.toFixed(1)} at the start and ${os.loadavg()[0].toFixed(1)} at the end on ${os.cpus().length} cores.`,
    '',
    `- ${verdict(target.warm <= TARGET_P50_MS)}: ${TARGET_CARDS} cards in ${ms(target.warm)} p50 (target ≤ ${TARGET_P50_MS} ms)`,
    `- ${verdict(compare.warm <= compare.old)}: at ${COMPARE_CARDS} cards ${ms(compare.warm)} against the seed matcher's ${ms(compare.old)} (target: no slower)`,
    `- ${verdict(rows.every((r) => r.same))}: both fire the same cards at every size`,
  ].join('\n');
}
