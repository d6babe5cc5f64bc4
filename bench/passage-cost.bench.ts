// What verbatim recall of the story costs a turn (issue 26's cost targets), on a 10,000-action
// story (player actions and narrations of realistic lengths, with undone turns, retried takes,
// side branches and edits, so the path filter has work to do) in a scratch Postgres:
//
// - recall: a query → the ranked passages on the path, as a turn runs it (MemoryRetrievalService:
//   the index's catch-up with nothing new, the query's embedding with the offline embedder, then
//   StoryRecallService.search: full text in Postgres, cosine over the in-process vector cache,
//   the path filter, fusion, the texts), p50 / p99 over many varied queries, each on a fresh
//   projection object (a turn's state is new every turn, so nothing cached per state helps; the
//   path index kept per adventure is brought to it, here with nothing moved, where a real turn
//   adds its action and narration); and the same split into its steps, to show where the time
//   goes;
// - a turn's context assembly at 16k (buildTurnContext: the history window read and the prompt
//   built) with the recalled candidates and without, alternating in one run; the target is on the
//   difference of the p50s.
//
// Targets: recall p50 ≤ 15 ms, p99 ≤ 40 ms; assembly with recall ≤ 5 ms slower at p50.
// Options: --queries N (default 300), --actions N (nodes on the path, default 10,000), --keep
// true (the scratch database is left, and named, for EXPLAIN ANALYZE).
import * as os from 'node:os';
import { sql } from 'kysely';
import { storyPath, storyTail, type AdventureState, type PathEntry } from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import { AdventureCommandHandler, buildTurnContext } from '@chronicle/adventure-store';
import type { RecalledPassage } from '@chronicle/context';
import { EventStoreRepository, migrateToLatest, SnapshotRepository } from '@chronicle/event-store';
import { OfflineEmbedder } from '@chronicle/llm';
import {
  MemoryRetrievalService,
  PassageTermCache,
  PassageVectorCache,
  StoryPassageRepository,
  StoryRecallService,
  TURN_CATCH_UP_LIMIT,
  VectorCache,
  EmbeddingRepository,
} from '@chronicle/memory-store';
import {
  RANKING_DEPTH,
  RETRIEVAL_WINDOW_ACTIONS,
  matchingLexemes,
  pathIndex,
  queryWords,
  recallQuery,
  StoryPathIndex,
  topKByCosine,
} from '@chronicle/memory';
import { createTestDatabase } from '@chronicle/testing';
import { appendHistory } from './history';
import type { BenchOptions } from './run';
import { ms, summarize, type Timing } from './stats';

const DEFAULT_ACTIONS = 10_000;
const DEFAULT_QUERIES = 300;
const BUDGET = 16_384;
const TARGETS = { recallP50: 15, recallP99: 40, assemblyDelta: 5 };

// ----- A deterministic story -----

/** xorshift32: the same story and queries on every run. */
function random(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

// English's most frequent words lead (stop words, which the `english` configuration drops, and
// common content words that match thousands of passages), then the story's own vocabulary.
const COMMON = (
  'the of and to a in is you that it he was for on are as with his they at be this have from ' +
  'or one had by word but not what all were we when your can said there use an each which she ' +
  'do how their if will up other about out many then them these so some her would make like ' +
  'him into time has look two more write go see number no way could people my than first water ' +
  'been call who its now find long down day did get come made may part over new sound take ' +
  'only little work know place year live me back give most very after thing our just name good ' +
  'sentence man think say great where help through much before line right too mean old any ' +
  'same tell boy follow came want show also around form three small set put end does another ' +
  'well large must big even such because turn here why ask went men read need land different ' +
  'home us move try kind hand picture again change off play spell air away animal house point ' +
  'page letter mother answer found study still learn should world high every near add food ' +
  'between own below country plant last school father keep tree never start city earth eye ' +
  'light thought head under story saw left few while along might close something seem next ' +
  'hard open example begin life always those both paper together got group often run'
).split(' ');
const STORY = (
  'lamp harbour keeper tide rope lantern chapel stone key letter debt smuggler oil storm quay ' +
  'bell cellar ledger compass map ferry gull fog reef wreck anchor mast sail cliff tower stair ' +
  'door lock chain blade coin purse ring seal wax ink quill candle ash ember smoke salt brine ' +
  'net hook crab eel kelp shell pearl rust iron brass copper silver gold mirror window shutter ' +
  'roof gutter chimney hearth kettle bread cheese ale cask barrel crate sack cart horse mule ' +
  'road bridge mill river marsh reed heron crow owl wolf fox hound rat moth spider web dust ' +
  'bone skull grave crypt altar relic prayer hymn priest sexton widow orphan sailor captain ' +
  'guard soldier merchant clerk scribe thief beggar healer witch oracle prophecy curse omen ' +
  'dream whisper shadow echo silence thunder lightning rain snow frost ice wind gale calm dawn ' +
  'dusk midnight noon moon star comet'
).split(' ');
const SYLLABLES = 'ka ri mo sa len tor vel an is ur eth ba dun gor mi la fen ost ry ca del'.split(
  ' ',
);

/** Names and rare words: each appears in a handful of passages, as a story's proper nouns do. */
function rareWords(count: number, next: () => number): string[] {
  const words = new Set<string>();
  while (words.size < count) {
    const parts = 2 + Math.floor(next() * 2);
    let word = '';
    for (let i = 0; i < parts; i++) word += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
    words.add(word);
  }
  return [...words];
}

/** Words by Zipf's law over `vocabulary` (most frequent first). */
function zipf(vocabulary: readonly string[], next: () => number): () => string {
  const weights = vocabulary.map((_, rank) => 1 / (rank + 1));
  const cumulative: number[] = [];
  let total = 0;
  for (const weight of weights) cumulative.push((total += weight));
  return () => {
    const target = next() * total;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (cumulative[mid] < target) low = mid + 1;
      else high = mid;
    }
    return vocabulary[low];
  };
}

interface Story {
  history: AdventureHistory;
  sentence: (words: number) => string;
  next: () => number;
}

function storyWriter(seed: number): Story {
  const next = random(seed);
  const word = zipf([...COMMON, ...STORY, ...rareWords(3_000, next)], next);
  const sentence = (words: number) => {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(word());
    const text = out.join(' ');
    return `${text[0].toUpperCase()}${text.slice(1)}.`;
  };
  const history = AdventureHistory.create({
    title: 'The Saltmarch Light',
    settings: { memoryBankEnabled: true, contextTokenBudget: BUDGET },
  });
  return { history, sentence, next };
}

/** A player action: 6–40 words; a narration: 60–220 words, in sentences. */
function prose(story: Story, min: number, max: number): string {
  const words = min + Math.floor(story.next() * (max - min));
  const sentences: string[] = [];
  for (let left = words; left > 0;) {
    const length = Math.min(left, 6 + Math.floor(story.next() * 14));
    sentences.push(story.sentence(length));
    left -= length;
  }
  return sentences.join(' ');
}

/**
 * Plays turns until the path holds `actions` nodes. Along the way, as players do: every 9th turn
 * is undone and played again otherwise, every 13th narration is retried, every 97th turn a side
 * branch of three turns is played from six nodes back and left, every 31st an old action is
 * edited. What the path does not hold stays in the index, so the path filter has to drop it.
 */
function playStory(story: Story, actions: number): void {
  const { history } = story;
  const turn = () => {
    history.act('story', prose(story, 6, 40));
    history.narrate({ text: prose(story, 60, 220) });
  };
  let turns = 0;
  while (storyPath(history.state).length < actions) {
    turns++;
    turn();
    if (turns % 9 === 0) {
      history.undo().undo();
      turn();
    }
    if (turns % 13 === 0) {
      history.retry({ text: prose(story, 60, 220) });
    }
    if (turns % 97 === 0) {
      const path = storyPath(history.state);
      const tip = history.head;
      history.moveHead(path[path.length - 7].id);
      for (let i = 0; i < 3; i++) turn();
      history.moveHead(tip);
    }
    if (turns % 31 === 0) {
      const path = storyPath(history.state);
      const old = path[Math.floor(story.next() * (path.length - 10))];
      if (old.type !== 'start') history.edit(old.id, prose(story, 6, 40));
    }
  }
}

/** A player's action, and the passage it asks about (null: a new action in the story's words). */
interface Asked {
  text: string;
  source: string | null;
}

/**
 * Varied player actions: half ask about something on the path (a few of an old passage's words
 * among the player's own), half are new actions in the story's words.
 */
function queries(
  story: Story,
  path: readonly PathEntry[],
  texts: readonly string[],
  count: number,
): Asked[] {
  const out: Asked[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      const at = Math.floor(story.next() * texts.length);
      const words = texts[at].split(/\W+/).filter(Boolean);
      const picked: string[] = [];
      for (let k = 0; k < 3 + (i % 5); k++) {
        picked.push(words[Math.floor(story.next() * words.length)]);
      }
      out.push({
        text: `Ask about the ${picked.join(' ')}. ${story.sentence(4 + (i % 9))}`,
        source: path[at].id,
      });
    } else {
      out.push({ text: prose(story, 6, 40), source: null });
    }
  }
  return out;
}

// ----- Measuring -----

/** A turn's projection is a new object each turn: nothing cached on the state object helps. */
const fresh = (state: AdventureState): AdventureState => ({ ...state });

async function timed<T>(fn: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { value, ms: Number(process.hrtime.bigint() - start) / 1e6 };
}

export default async function run(options: BenchOptions): Promise<string> {
  const actions = Number(options.actions ?? DEFAULT_ACTIONS);
  const queryCount = Number(options.queries ?? DEFAULT_QUERIES);
  const load = os.loadavg();
  const database = await createTestDatabase('bench_passages', { empty: true });
  try {
    await migrateToLatest(database.db);
    const story = storyWriter(26);
    const playing = await timed(() => playStory(story, actions));
    const { history } = story;
    const adventureId = history.state.id as string;
    const events = new EventStoreRepository(database.db);
    await appendHistory(events, adventureId, history.events);
    const adventures = new AdventureCommandHandler(events, new SnapshotRepository(database.db), {
      snapshotEvery: 50,
    });
    const state = (await adventures.get(adventureId))!;
    const embedder = new OfflineEmbedder();
    const passages = new StoryPassageRepository(database.db);
    const vectors = new PassageVectorCache(passages);
    const terms = new PassageTermCache(passages);
    const recall = new StoryRecallService(passages, adventures, embedder, vectors, terms);
    // Every passage holding a word of the query ranked, as before matchingLexemes: the same
    // story, queries, scoring and caches.
    const exact = new StoryRecallService(passages, adventures, embedder, vectors, terms, Infinity);
    const retrieval = new MemoryRetrievalService(
      adventures,
      embedder,
      new VectorCache(new EmbeddingRepository(database.db)),
      recall,
    );
    const indexing = await timed(() => recall.catchUp(state));
    const stored = await passages.count(adventureId);
    // As autovacuum would after a bulk load: the planner sees the table as it is.
    await sql`ANALYZE story_passages`.execute(database.db);

    const path = storyPath(state);
    const pathTexts = await adventures.readActionTexts(adventureId, path);
    const scene = await adventures.readActionTexts(
      adventureId,
      storyTail(state, RETRIEVAL_WINDOW_ACTIONS),
    );
    const asked = queries(story, path, pathTexts, queryCount);
    const recallOf = (text: string) => recallQuery({ actionText: text, scene, cards: [] });

    // Warm up: the caches load, the text cache and the plans settle.
    for (const { text } of asked.slice(0, 20)) {
      const query = recallOf(text);
      const { vector } = await retrieval.embedQuery(query);
      await recall.search(fresh(state), query.focus, vector);
      await exact.search(fresh(state), query.focus, vector);
    }

    /**
     * The texts as a worker reads old passages: from the log (its text cache holds the recent
     * window, not the story of 10,000 actions), so each search reads them with an empty cache.
     */
    const coldTexts = () =>
      new AdventureCommandHandler(events, new SnapshotRepository(database.db), {
        snapshotEvery: 50,
      });
    /** Recall as a turn runs it: catch-up beside the query's embedding, then the search. */
    const turnRecall = async (service: StoryRecallService, text: string) => {
      const turnState = fresh(state);
      const query = recallOf(text);
      const [, { vector }] = await Promise.all([
        service.catchUp(turnState, TURN_CATCH_UP_LIMIT),
        retrieval.embedQuery(query),
      ]);
      return service.search(turnState, query.focus, vector, coldTexts());
    };
    const whole: number[] = [];
    const wholeExact: number[] = [];
    const steps: Record<string, number[]> = {
      'catch-up, nothing new': [],
      'embed the query (focus + scene)': [],
      'search (all of StoryRecallService.search)': [],
      '· full text, every passage with a word ranked (before)': [],
      '· full text, the rarer lexemes matched (matchingLexemes)': [],
      '· term counts refresh (rows since the last)': [],
      '· path index brought to the projection (kept per adventure)': [],
      '· path index built whole (an adventure new to the process)': [],
      '· vector cache refresh (rows since the last)': [],
      '· cosine top-k over the matrix, path-filtered': [],
      '· texts of the candidates, from the log': [],
    };
    // As the service keeps it: one per adventure, brought to each turn's projection.
    const keptPath = new StoryPathIndex().sync(state);
    const candidates: RecalledPassage[][] = [];
    const quality = { asked: 0, found: 0, foundExact: 0, shared: 0, exactCandidates: 0 };
    for (const [i, { text, source }] of asked.entries()) {
      // Alternating which goes first, so neither always finds the other's pages warm.
      const first = i % 2 === 0 ? recall : exact;
      const a = await timed(() => turnRecall(first, text));
      const b = await timed(() => turnRecall(first === recall ? exact : recall, text));
      const [mine, theirs] = first === recall ? [a, b] : [b, a];
      whole.push(mine.ms);
      wholeExact.push(theirs.ms);
      candidates.push(mine.value);
      const ids = new Set(mine.value.map((p) => p.actionId));
      quality.shared += theirs.value.filter((p) => ids.has(p.actionId)).length;
      quality.exactCandidates += theirs.value.length;
      if (source !== null) {
        quality.asked++;
        if (ids.has(source)) quality.found++;
        if (theirs.value.some((p) => p.actionId === source)) quality.foundExact++;
      }

      const query = recallOf(text);
      const stepState = fresh(state);
      steps['catch-up, nothing new'].push(
        (await timed(() => recall.catchUp(stepState, TURN_CATCH_UP_LIMIT))).ms,
      );
      const embedded = await timed(() => retrieval.embedQuery(query));
      steps['embed the query (focus + scene)'].push(embedded.ms);
      steps['search (all of StoryRecallService.search)'].push(
        (await timed(() => recall.search(fresh(state), query.focus, embedded.value.vector))).ms,
      );
      const words = queryWords(query.focus);
      const counts = await timed(() => terms.frequencies(adventureId));
      steps['· term counts refresh (rows since the last)'].push(counts.ms);
      const known = (await terms.lexemes(words)).map((lexeme) => ({
        lexeme,
        passages: counts.value.counts.get(lexeme) ?? 0,
      }));
      const rank = (match: string[]) =>
        timed(() =>
          passages.searchWords(
            adventureId,
            { terms: known, match, passages: counts.value.passages },
            RANKING_DEPTH * 2,
          ),
        );
      steps['· full text, every passage with a word ranked (before)'].push(
        (await rank(matchingLexemes(known, Infinity))).ms,
      );
      steps['· full text, the rarer lexemes matched (matchingLexemes)'].push(
        (await rank(matchingLexemes(known))).ms,
      );
      const found = candidates[candidates.length - 1];
      steps['· texts of the candidates, from the log'].push(
        (
          await timed(() =>
            coldTexts().readActionTexts(
              adventureId,
              found.map((p) => path[p.position]),
            ),
          )
        ).ms,
      );
      steps['· path index built whole (an adventure new to the process)'].push(
        (await timed(() => pathIndex(fresh(state)))).ms,
      );
      const index = await timed(() => keptPath.sync(fresh(state)));
      steps['· path index brought to the projection (kept per adventure)'].push(index.ms);
      const cache = await timed(() => vectors.vectors(adventureId, embedder.model));
      steps['· vector cache refresh (rows since the last)'].push(cache.ms);
      steps['· cosine top-k over the matrix, path-filtered'].push(
        (
          await timed(() =>
            topKByCosine(
              cache.value.matrix,
              embedded.value.vector,
              RANKING_DEPTH,
              (row) =>
                index.value.textVersionOf(cache.value.actionIds[row]) !==
                cache.value.textVersions[row],
            ),
          )
        ).ms,
      );
    }

    // A turn's context assembly at 16k, with the recalled candidates and without, alternating.
    const withRecall: number[] = [];
    const without: number[] = [];
    const build = (found: RecalledPassage[] | null) =>
      buildTurnContext(adventures, fresh(state), {
        defaultModel: 'bench-model',
        memories: { used: [] },
        passages: found ? { candidates: found } : null,
      });
    for (let i = 0; i < 10; i++) await build(candidates[i]);
    let recalledUsed = 0;
    for (let i = 0; i < candidates.length; i++) {
      const first = i % 2 === 0;
      if (first) without.push((await timed(() => build(null))).ms);
      const built = await timed(() => build(candidates[i]));
      withRecall.push(built.ms);
      recalledUsed += built.value.report.passages?.used.length ?? 0;
      if (!first) without.push((await timed(() => build(null))).ms);
    }

    return report({
      actions: path.length,
      offPath: stored - path.length,
      stored,
      queries: asked.length,
      recall: summarize(whole),
      recallExact: summarize(wholeExact),
      quality,
      steps: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, summarize(v)])),
      withRecall: summarize(withRecall),
      without: summarize(without),
      recalledUsed: recalledUsed / candidates.length,
      candidates: candidates.reduce((sum, c) => sum + c.length, 0) / candidates.length,
      setup: { playing: playing.ms, indexing: indexing.ms },
      load: [load, os.loadavg()],
      events: history.events.length,
    });
  } finally {
    if (options.keep === 'true') console.error(`kept ${database.connectionString}`);
    else await database.drop();
  }
}

interface Report {
  actions: number;
  offPath: number;
  stored: number;
  queries: number;
  recall: Timing;
  recallExact: Timing;
  quality: {
    asked: number;
    found: number;
    foundExact: number;
    shared: number;
    exactCandidates: number;
  };
  steps: Record<string, Timing>;
  withRecall: Timing;
  without: Timing;
  recalledUsed: number;
  candidates: number;
  setup: { playing: number; indexing: number };
  load: [number[], number[]];
  events: number;
}

function report(r: Report): string {
  const pass = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const delta = r.withRecall.p50 - r.without.p50;
  const loads = r.load.map((l) => l.map((v) => v.toFixed(1)).join(' / ')).join(' → ');
  return [
    `## Recall's cost (issue 26): ${r.actions.toLocaleString('en')}-action story`,
    '',
    `${r.actions.toLocaleString('en')} actions and narrations on the path, ${r.offPath.toLocaleString('en')} more off it ` +
      `(undone turns, retried takes, side branches; an edit replaces its node's row), ` +
      `${r.stored.toLocaleString('en')} passages stored, ${r.events.toLocaleString('en')} events; ` +
      `${r.queries} varied queries, offline embedder (256 dims); ` +
      `indexing all of it took ${(r.setup.indexing / 1000).toFixed(1)} s. Load average (1 / 5 / 15 min) ${loads}.`,
    '',
    '| step | p50 | p99 | mean |',
    '|---|---:|---:|---:|',
    `| **recall (catch-up ∥ query embedding, then search)** | **${ms(r.recall.p50)}** | **${ms(r.recall.p99)}** | ${ms(r.recall.mean)} |`,
    `| recall with every lexeme matched (before matchingLexemes), same run | ${ms(r.recallExact.p50)} | ${ms(r.recallExact.p99)} | ${ms(r.recallExact.mean)} |`,
    ...Object.entries(r.steps).map(
      ([name, t]) => `| ${name} | ${ms(t.p50)} | ${ms(t.p99)} | ${ms(t.mean)} |`,
    ),
    '',
    `| context assembly at ${BUDGET.toLocaleString('en')} (buildTurnContext) | p50 | p99 |`,
    '|---|---:|---:|',
    `| without recall | ${ms(r.without.p50)} | ${ms(r.without.p99)} |`,
    `| with the recalled candidates (${r.candidates.toFixed(1)} a query, ${r.recalledUsed.toFixed(1)} in the prompt) | ${ms(r.withRecall.p50)} | ${ms(r.withRecall.p99)} |`,
    `| difference | ${ms(delta)} | |`,
    '',
    `- recall p50 ${ms(r.recall.p50)} (target ≤ ${TARGETS.recallP50} ms): ${pass(r.recall.p50 <= TARGETS.recallP50)}; ` +
      `p99 ${ms(r.recall.p99)} (target ≤ ${TARGETS.recallP99} ms): ${pass(r.recall.p99 <= TARGETS.recallP99)}`,
    `- quality, against every lexeme matched: the passage asked about is among the candidates for ${r.quality.found} of ${r.quality.asked} queries (${r.quality.foundExact} with every lexeme); ` +
      `${((100 * r.quality.shared) / Math.max(1, r.quality.exactCandidates)).toFixed(1)}% of the candidates are the same`,
    `- context assembly at 16k with recall − without, p50: ${ms(delta)} (target ≤ ${TARGETS.assemblyDelta} ms): ${pass(delta <= TARGETS.assemblyDelta)}`,
  ].join('\n');
}
