// Prompt caching over a long adventure: 400 turns of a generated story, the prompt of every turn
// built at 8k, 16k and 32k in both history modes, each prompt compared with the ones before it
// as a provider's prefix cache would (OpenAI's rule: a shared prefix counts from 1,024 tokens in
// steps of 128). Reports the share of input tokens the cache serves and the history's mean fill
// of its budget. Every turn changes the state and most change the memories; the summary moves
// every eighth turn; story cards trigger on the prose. Pure computation, no services.
import {
  assembleContextSync,
  cacheableTokens,
  memoryReader,
  tokenizer,
  type ContextHead,
  type HistoryMode,
  type UsedMemory,
  type WindowAction,
} from '@chronicle/context';
import {
  aCard,
  aContextHead,
  aNarrativeState,
  anAction,
  proseGenerator,
  seededRandom,
  storyTokensOf,
} from '../libs/context/src/testing';

const TURNS = 400;
const BUDGETS = [8192, 16384, 32768];
const MODES: HistoryMode[] = ['stable', 'sliding'];
/** Earlier prompts a request is compared with (a provider keeps a few recent prefixes warm). */
const CACHE_DEPTH = 4;
const SWEEP_SHARES = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4];
const TARGETS = { 8192: 0.75, 16384: 0.85 } as Record<number, number>;
const TARGET_FILL = 0.75;

const CARD_KEYS = ['Mira', 'Captain Voss', 'Tobias', 'ferryman', 'Renée', 'lighthouse', 'archive'];
const cards = CARD_KEYS.map((key, i) =>
  aCard(`c${i}`, key, `${key} matters to this story: ${'a detail worth knowing. '.repeat(6)}`),
);

/** The story after each turn: an opening, then a player action and a narration per turn. */
function generatedStory(): WindowAction[][] {
  const prose = proseGenerator(42);
  const path: WindowAction[] = [anAction('a0', prose.narration(), 'start')];
  const states: WindowAction[][] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    const { type, text } = prose.playerAction();
    path.push(anAction(`a${path.length}`, text, type));
    states.push([...path]);
    path.push(anAction(`a${path.length}`, prose.narration(), 'ai'));
  }
  return states;
}

/** The memories retrieved on each turn: a growing bank, one pinned, one or two swapped a turn. */
function retrievals(): UsedMemory[][] {
  const random = seededRandom(7);
  const prose = proseGenerator(9);
  const bank: UsedMemory[] = [];
  let used: UsedMemory[] = [];
  const out: UsedMemory[][] = [];
  for (let turn = 1; turn <= TURNS; turn++) {
    if (turn % 3 === 0) {
      bank.push({
        id: `m${String(bank.length).padStart(4, '0')}`,
        text: prose.sentence(),
        similarity: 0,
        pinned: bank.length === 0,
      });
    }
    const swaps = Math.floor(random() * 3);
    for (let s = 0; s < swaps && bank.length > used.length; s++) {
      const candidates = bank.filter((m) => !used.includes(m));
      const fresh = candidates[Math.floor(random() * candidates.length)];
      if (used.length >= 5) used.splice(1 + Math.floor(random() * 4), 1);
      used.push(fresh);
    }
    // the retrieval's own order: by this turn's similarity
    used = used.map((m) => ({ ...m, similarity: Math.round(random() * 1e4) / 1e4 }));
    out.push([...used].sort((a, b) => b.similarity - a.similarity));
  }
  return out;
}

function head(
  budget: number,
  mode: HistoryMode,
  turn: number,
  path: WindowAction[],
  memories: UsedMemory[],
  share?: number,
): ContextHead {
  return aContextHead({
    settings: {
      contextTokenBudget: budget,
      maxOutputTokens: 800,
      historyMode: mode,
      ...(share !== undefined && { historyBlockShare: share }),
    },
    persona: { name: 'Ada Quill', pronouns: 'she/her', description: 'A keeper with a debt.' },
    plotEssentials: 'The lighthouse has been dark for three nights. The harbour master owes Ada.',
    authorsNote: 'Keep the tone bleak and the weather hostile.',
    aiInstructions: 'Write in present tense. Avoid purple prose.',
    canon: { rules: ['The dead do not return.'], forbiddenStatusChanges: [] },
    storyCards: cards,
    storySummary:
      turn < 8 ? '' : `Summary as of turn ${turn - (turn % 8)}: Ada searches for the lamp oil.`,
    narrativeState: aNarrativeState(turn),
    memories: { used: memories },
    totalActions: path.length,
    storyTokens: storyTokensOf(path),
  });
}

const tok = tokenizer('cl100k_base');

/** A prompt as pieces between blank lines, each with its (memoised) token count. */
function pieces(text: string): { text: string; tokens: number }[] {
  return text.split('\n\n').map((piece) => ({ text: piece, tokens: tok.countCached(piece) }));
}

/** Tokens of the longest prefix `prompt` shares with `earlier`: whole pieces, then the first that differs up to its first differing character. */
function sharedPrefix(
  prompt: { text: string; tokens: number }[],
  earlier: { text: string; tokens: number }[],
) {
  let tokens = 0;
  for (let i = 0; i < prompt.length && i < earlier.length; i++) {
    if (prompt[i].text === earlier[i].text) {
      tokens += prompt[i].tokens + (i > 0 ? 1 : 0);
      continue;
    }
    const a = prompt[i].text;
    const b = earlier[i].text;
    let c = 0;
    while (c < a.length && c < b.length && a[c] === b[c]) c++;
    return tokens + (c > 0 ? tok.count(a.slice(0, c)) : 0);
  }
  return tokens;
}

interface Run {
  cachedShare: number;
  /** Over the turns on which the story no longer fits (before that, the story limits the fill). */
  meanFill: number;
  meanFillAll: number;
  fullTurns: number;
  reportedShare: number;
  moves: number;
}

function run(
  budget: number,
  mode: HistoryMode,
  story: WindowAction[][],
  memories: UsedMemory[][],
  share?: number,
): Run {
  const recent: { text: string; tokens: number }[][] = [];
  let input = 0;
  let cached = 0;
  let fill = 0;
  let fillAll = 0;
  let fullTurns = 0;
  let reported = 0;
  let moves = 0;
  let previousStart: string | null = null;
  for (let turn = 1; turn <= TURNS; turn++) {
    const path = story[turn - 1];
    const built = assembleContextSync(
      head(budget, mode, turn, path, memories[turn - 1], share),
      memoryReader(path),
    );
    const prompt = pieces(`${built.system}\n\n${built.story}`);
    const total = prompt.reduce((sum, p) => sum + p.tokens, 0) + prompt.length - 1;
    const shared = recent.reduce(
      (best, earlier) => Math.max(best, sharedPrefix(prompt, earlier)),
      0,
    );
    input += total;
    cached += cacheableTokens(shared);
    reported += built.report.cache.expectedCachedTokens;
    fillAll += built.report.cache.historyFill;
    if (built.report.history.included < built.report.history.total) {
      fill += built.report.cache.historyFill;
      fullTurns++;
    }
    const start = path[path.length - built.report.history.included]?.id ?? null;
    if (previousStart !== null && start !== previousStart) moves++;
    previousStart = start;
    recent.unshift(prompt);
    recent.length = Math.min(recent.length, CACHE_DEPTH);
  }
  return {
    cachedShare: cached / input,
    meanFill: fullTurns > 0 ? fill / fullTurns : 0,
    meanFillAll: fillAll / TURNS,
    fullTurns,
    reportedShare: reported / input,
    moves,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export default async function cacheBench(): Promise<string> {
  const story = generatedStory();
  const memories = retrievals();
  const last = story[story.length - 1];
  const storyTokens = last.reduce((sum, a) => sum + a.tokens, 0);
  const lines = [
    `## Prompt cache (${TURNS} turns, ${last.length} actions, ${storyTokens.toLocaleString('en')} story tokens)`,
    '',
    "Share of input tokens a prefix cache serves (OpenAI's rule: from 1,024 shared tokens, in",
    `128-token steps; each prompt compared with the ${CACHE_DEPTH} before it), and the history's`,
    'mean fill of the tokens it may use. The state changes every turn, the retrieved memories on',
    'most, the summary every eighth; 7 story cards trigger on the prose.',
    '',
    '| budget | mode | cached share | mean fill (turns the story outgrew the budget) | mean fill (all turns) | start moves | next-request share the report expects |',
    '|---:|:---|---:|---:|---:|---:|---:|',
  ];
  const verdicts: string[] = [];
  for (const budget of BUDGETS) {
    for (const mode of MODES) {
      const r = run(budget, mode, story, memories);
      lines.push(
        `| ${budget} | ${mode} | ${pct(r.cachedShare)} | ${pct(r.meanFill)} (${r.fullTurns} turns) | ${pct(r.meanFillAll)} | ${r.moves} | ${pct(r.reportedShare)} |`,
      );
      if (mode === 'stable') {
        const target = TARGETS[budget];
        if (target !== undefined) {
          verdicts.push(
            `- ${r.cachedShare >= target ? 'PASS' : 'FAIL'}: stable cached share at ${budget} is ${pct(r.cachedShare)} (target ≥ ${pct(target)})`,
          );
        }
        verdicts.push(
          `- ${r.meanFill >= TARGET_FILL ? 'PASS' : 'FAIL'}: stable mean fill at ${budget} is ${pct(r.meanFill)} (target ≥ ${pct(TARGET_FILL)})`,
        );
      }
    }
  }
  lines.push(
    '',
    'Block size sweep (`stable`, block = share × budget; the default is 0.25):',
    '',
    '| share | 8k cached | 8k fill | 16k cached | 16k fill | 32k cached | 32k fill |',
    '|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const share of SWEEP_SHARES) {
    const cells = BUDGETS.map((budget) => {
      const r = run(budget, 'stable', story, memories, share);
      return `${pct(r.cachedShare)} | ${pct(r.meanFill)}`;
    });
    lines.push(`| ${share} | ${cells.join(' | ')} |`);
  }
  return [...lines, '', ...verdicts].join('\n');
}
