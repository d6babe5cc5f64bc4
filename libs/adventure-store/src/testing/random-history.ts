// Random adventure histories for property specs: a seeded generator picks commands of every kind
// (actions, continues, narrations with state events, retries, failures, cancellations, undo,
// redo, branches, edits, erases, corrections, retcons, story cards, scripts and their effects,
// player and worker memories, summaries) and sends each through the real deciders
// (`decideCommand`), so every history is one the domain could have written. A command the
// decider refuses is skipped, as a refused request appends nothing.
//
// Deterministic: the same seed makes the same history, so a failing seed is a reproduction.

import {
  DomainError,
  allNodes,
  type AdventureState,
  type RecordedAdventureEvent,
  type StoryCard,
} from '@chronicle/adventure';
import { AdventureHistory, narrationCommand } from '@chronicle/adventure/testing';
import { chapterSpans, foldPlan, memoryBlocks, summaryPlan } from '@chronicle/memory';
import type { Correction, StateEvent } from '@chronicle/narrative';
import { decideCommand, type Command } from '../adventure.decide';

/** mulberry32: a small, fast PRNG with a 32-bit seed; plenty for picking commands. */
export class Prng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[this.int(items.length)];
  }
}

const ENTITIES = ['mira', 'harbor', 'tower', 'lamp'];
const SCRIPTS = ['counter', 'cards'];

export interface RandomHistory {
  seed: number;
  events: RecordedAdventureEvent[];
  /** The command types the decider accepted, in order (what a failing seed did). */
  accepted: string[];
  refused: number;
}

/** A history of `steps` commands drawn from `seed` (refused ones append nothing). */
export function randomHistory(seed: number, steps: number): RandomHistory {
  const rand = new Prng(seed);
  const history = AdventureHistory.create({
    settings: { memoryBankEnabled: true, autoSummarize: true },
    scripts: SCRIPTS.map((id) => ({ id, name: id })),
    storyCards: [
      { id: 'card-mira', name: 'Mira', keys: 'mira', entry: 'Mira keeps the light.' },
      { id: 'card-lamp', name: 'Lamp', keys: 'lamp', entry: 'The lamp never goes out.' },
    ],
  });
  const accepted: string[] = [];
  let refused = 0;
  for (let step = 0; step < steps; step++) {
    const state = history.state;
    const command = nextCommand(rand, history, state);
    let events;
    try {
      events = decideCommand(command, state);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      refused += 1;
      continue;
    }
    if (events.length === 0) continue;
    history.append(...events);
    accepted.push(command.type);
  }
  return { seed, events: history.events, accepted, refused };
}

type Pick = (rand: Prng, history: AdventureHistory, state: AdventureState) => Command;

/** What the generator may send, with how often: a turn's commands most, the rest now and then. */
const COMMANDS: [weight: number, pick: Pick][] = [
  [
    10,
    (rand, history, state) =>
      state.inFlight ? narration(rand, history, state) : action(rand, history),
  ],
  [6, (rand, history, state) => narration(rand, history, state)],
  [3, (rand, history) => ({ type: 'RequestRetry', data: { turnId: history.nextId('turn') } })],
  [
    1,
    (_, __, state) => ({
      type: 'RecordNarrationFailure',
      data: { turnId: inFlightTurn(state), error: 'model unreachable', attempts: 3 },
    }),
  ],
  [1, (_, __, state) => ({ type: 'CancelTurn', data: { turnId: inFlightTurn(state) } })],
  [
    1,
    (rand, _, state) => ({
      type: 'StopTurnByScript',
      data: {
        turnId: inFlightTurn(state),
        scriptId: 'counter',
        message: 'stopped',
        effects: effects(rand, state, 'context'),
      },
    }),
  ],
  [3, () => ({ type: 'Undo', data: {} })],
  [2, () => ({ type: 'Redo', data: {} })],
  [2, (rand, _, state) => ({ type: 'MoveHead', data: { actionId: anyNode(rand, state) } })],
  [
    2,
    (rand, history, state) => ({
      type: 'EditAction',
      data: {
        actionId: anyNode(rand, state),
        text: `edited ${history.nextId('text')}${forgedLine(history)}`,
      },
    }),
  ],
  [1, (rand, _, state) => ({ type: 'EraseAction', data: { actionId: anyNode(rand, state) } })],
  [
    2,
    (rand, _, state) => ({
      type: 'CorrectNarrativeState',
      data: {
        correction: correction(rand),
        ...(rand.chance(0.3) && { anchorActionId: pathNode(rand, state) }),
      },
    }),
  ],
  [2, (rand, _, state) => retcon(rand, state)],
  [
    1,
    (rand, history) => ({
      type: 'AddStoryCard',
      data: {
        card: {
          id: history.nextId('card'),
          name: 'Gate',
          keys: rand.pick(ENTITIES) ?? '',
          entry: 'A gate.',
        },
      },
    }),
  ],
  [
    1,
    (rand, history, state) => ({
      type: 'EditStoryCard',
      data: {
        cardId: rand.pick(state.cards)?.id ?? 'none',
        changes: {
          entry: `entry ${history.nextId('e')}`,
          notes: rand.chance(0.5) ? null : 'noted',
        },
      },
    }),
  ],
  [
    1,
    (rand, _, state) => ({
      type: 'RemoveStoryCard',
      data: { cardId: rand.pick(state.cards)?.id ?? 'none' },
    }),
  ],
  [1, (rand, history) => importCards(rand, history)],
  [
    1,
    (_, history) => ({
      type: 'EditAdventure',
      data: { authorsNote: `note ${history.nextId('n')}`, settings: { temperature: 0.5 } },
    }),
  ],
  [
    1,
    (rand, history) => ({
      type: 'EditScript',
      data: { scriptId: rand.pick(SCRIPTS) ?? '', changes: { input: `// ${history.nextId('v')}` } },
    }),
  ],
  [
    1,
    (rand) => ({
      type: 'ReorderScripts',
      data: { ids: rand.chance(0.5) ? [...SCRIPTS].reverse() : SCRIPTS },
    }),
  ],
  [
    1,
    (rand, history) => ({
      type: 'AddMemory',
      data: { memoryId: history.nextId('memory'), text: `remember ${rand.pick(ENTITIES)}` },
    }),
  ],
  [1, (rand, _, state) => memoryCommand(rand, state)],
  [3, (_, history, state) => writeMemory(history, state)],
  [2, (_, history, state) => writeSummary(history, state)],
  [2, (_, history, state) => writeChapter(history, state)],
  [1, (_, history, state) => foldChapters(history, state)],
  [
    1,
    (rand, history, state) => ({
      type: 'EditSummary',
      data: {
        summaryId: rand.chance(0.8)
          ? history.nextId('summary')
          : (state.memory.summaries.at(-1)?.id ?? 'none'),
        text: `summary ${history.nextId('s')}`,
      },
    }),
  ],
];

const TOTAL_WEIGHT = COMMANDS.reduce((sum, [weight]) => sum + weight, 0);

function nextCommand(rand: Prng, history: AdventureHistory, state: AdventureState): Command {
  let left = rand.int(TOTAL_WEIGHT);
  for (const [weight, pick] of COMMANDS) {
    if (left < weight) return pick(rand, history, state);
    left -= weight;
  }
  throw new Error('unreachable: the weights cover every draw');
}

function inFlightTurn(state: AdventureState): string {
  return state.inFlight?.turnId ?? 'no-turn';
}

function anyNode(rand: Prng, state: AdventureState): string {
  return rand.pick([...allNodes(state)])?.id ?? 'none';
}

function pathNode(rand: Prng, state: AdventureState): string {
  return rand.pick(state.path)?.id ?? 'none';
}

/**
 * Now and then (every sixth call), a state event the player types into their text, which the
 * referee refuses to take back from the model. Drawn from the id counter, not the generator, so
 * the commands drawn stay those of the same seed without it.
 */
function forgedLine(history: AdventureHistory): string {
  const serial = history.nextId('p');
  if (Number(serial.slice(2)) % 6 !== 0) return '';
  return ` ${JSON.stringify({ type: 'fact', text: `typed ${serial}` })}`;
}

function stateEvent(rand: Prng, serial: string): StateEvent {
  const id = rand.pick(ENTITIES) ?? 'mira';
  switch (rand.int(5)) {
    case 0:
      return { type: 'enter', id, name: id.toUpperCase(), kind: 'character', status: 'alive' };
    case 1:
      return { type: 'status', id, to: rand.chance(0.5) ? 'tired' : 'alive' };
    case 2:
      return { type: 'move', id, to: rand.pick(ENTITIES) ?? 'harbor' };
    case 3:
      return { type: 'gain', holder: id, item: 'lamp' };
    default:
      return { type: 'fact', text: `fact ${serial}`, about: [id] };
  }
}

function correction(rand: Prng): Correction {
  const id = rand.pick(ENTITIES) ?? 'mira';
  switch (rand.int(4)) {
    case 0:
      return { op: 'setStatus', id, status: rand.chance(0.5) ? 'wounded' : null };
    case 1:
      return { op: 'addEntity', entity: { id: `${id}-2`, name: 'Other', kind: 'item' } };
    case 2:
      return { op: 'addFact', text: `corrected ${rand.int(5)}` };
    default:
      return { op: 'rename', id, name: `${id} the elder` };
  }
}

function action(rand: Prng, history: AdventureHistory): Command {
  const inputType = rand.pick(['do', 'say', 'story', 'continue'] as const) ?? 'do';
  const turnId = history.nextId('turn');
  const actionId = history.nextId('action');
  const text = `walk to the ${rand.pick(ENTITIES)}${forgedLine(history)}`;
  if (!rand.chance(0.25) || inputType === 'continue') {
    return { type: 'SubmitAction', data: { turnId, inputType, text, actionId } };
  }
  const stopped = rand.chance(0.2);
  return {
    type: 'SubmitAction',
    data: {
      turnId,
      inputType,
      text,
      actionId,
      script: {
        text: rand.chance(0.5) ? `> You ${text} slowly.` : `> You ${text}.`,
        stopped,
        stopMessage: stopped ? 'not now' : '',
        stoppedBy: stopped ? 'counter' : null,
        ...effects(rand, history.state, 'input'),
      },
    },
  };
}

function narration(rand: Prng, history: AdventureHistory, state: AdventureState): Command {
  const accepted = Array.from({ length: rand.int(4) }, () => stateEvent(rand, history.nextId('f')));
  const memories = state.memory.memories.filter(() => rand.chance(0.3)).map((m) => m.id);
  const command = narrationCommand(inFlightTurn(state), history.nextId('action'), {
    // The decider referees the reply: a raw line now and then comes back rejected.
    reported: rand.chance(0.2) ? [...accepted, 'mira flies'] : accepted,
    manifest: rand.chance(0.3) ? { timedLore: ['card-mira'] } : { sections: ['history'] },
    ...(memories.length > 0 && { memoriesUsed: memories }),
  });
  if (rand.chance(0.3)) {
    command.data.scripts = {
      context: effects(rand, state, 'context'),
      output: effects(rand, state, 'output'),
    };
  }
  return command;
}

/** What the scripts did in one hook: runs, changed states, card changes, messages. */
function effects(rand: Prng, state: AdventureState, hook: 'input' | 'context' | 'output') {
  const scriptId = rand.pick(SCRIPTS) ?? 'counter';
  const cards = state.cards.map((card: StoryCard) => card.id);
  const cardOps = [];
  if (rand.chance(0.4)) {
    const id = `auto-${rand.int(6)}`;
    cardOps.push({
      scriptId,
      op: {
        op: 'added' as const,
        index: 0,
        card: { id, title: id, keys: id, type: 'auto', entry: `about ${id}`, description: '' },
      },
    });
  }
  if (rand.chance(0.2) && cards.length > 0) {
    cardOps.push({
      scriptId,
      op: {
        op: 'updated' as const,
        id: rand.pick(cards) ?? '',
        fields: { entry: `updated ${rand.int(9)}` },
      },
    });
  }
  if (rand.chance(0.1) && cards.length > 0) {
    cardOps.push({ scriptId, op: { op: 'removed' as const, id: rand.pick(cards) ?? '' } });
  }
  if (rand.chance(0.1))
    cardOps.push({ scriptId, op: { op: 'reordered' as const, order: [...cards].reverse() } });
  const count = rand.int(40);
  return {
    runs: [
      {
        scriptId,
        hook,
        outcome: 'ok' as const,
        textChanged: false,
        ms: 1,
        cpuMs: 1,
        logs: [`ran ${count}`],
      },
    ],
    states: rand.chance(0.6)
      ? {
          [scriptId]: {
            count,
            seen: Array.from({ length: count % 7 }, (_, i) => `turn ${count - i}`),
          },
        }
      : {},
    cardOps,
    messages: rand.chance(0.2) ? [{ scriptId, message: { text: `note ${count}` } }] : [],
  };
}

function retcon(rand: Prng, state: AdventureState): Command {
  const narrated = [...allNodes(state)].filter((node) => node.accepted.length > 0);
  const node = rand.pick(narrated);
  return {
    type: 'RetconStateEvent',
    data: { actionId: node?.id ?? 'none', index: node ? rand.int(node.accepted.length) : 0 },
  };
}

function importCards(rand: Prng, history: AdventureHistory): Command {
  const book = history.nextId('book');
  return {
    type: 'ImportStoryCards',
    data: {
      book: { id: book, format: 'aid', formatVersion: null, name: book, raw: {} },
      mode: rand.chance(0.3) ? 'replace' : 'merge',
      cards: [
        {
          id: history.nextId('card'),
          name: 'Imported',
          keys: 'tower',
          entry: 'A tower.',
          origin: { format: 'aid', bookId: book, raw: {} },
        },
      ],
      skipped: 0,
    },
  };
}

function memoryCommand(rand: Prng, state: AdventureState): Command {
  const memoryId = rand.pick(state.memory.memories)?.id ?? 'none';
  switch (rand.int(5)) {
    case 0:
      return { type: 'EditMemory', data: { memoryId, text: 'edited memory' } };
    case 1:
      return { type: 'PinMemory', data: { memoryId } };
    case 2:
      return { type: 'UnpinMemory', data: { memoryId } };
    case 3:
      return { type: 'ForgetMemory', data: { memoryId } };
    default:
      return { type: 'DeleteMemory', data: { memoryId } };
  }
}

/** The memory worker's answer for the oldest block due (libs/memory's cadence). */
function writeMemory(history: AdventureHistory, state: AdventureState): Command {
  const block = memoryBlocks(state)[0];
  const span = block ?? { anchorActionId: 'none', sourceStart: 0, sourceEnd: 0 };
  return {
    type: 'WriteMemory',
    data: {
      memoryId: history.nextId('memory'),
      text: 'the worker remembers',
      block: {
        anchorActionId: span.anchorActionId,
        sourceStart: span.sourceStart,
        sourceEnd: span.sourceEnd,
      },
    },
  };
}

/** The summariser's chapter for the oldest span due (libs/memory's chapter plan). */
function writeChapter(history: AdventureHistory, state: AdventureState): Command {
  const span = chapterSpans(state)[0];
  return {
    type: 'WriteChapter',
    data: {
      chapterId: history.nextId('chapter'),
      text: 'a chapter of the story',
      span: {
        anchorActionId: span?.anchorActionId ?? 'none',
        sourceStart: span?.sourceStart ?? 0,
        sourceEnd: span?.sourceEnd ?? 0,
      },
    },
  };
}

/** The summariser's fold of the chapters due into the summary. */
function foldChapters(history: AdventureHistory, state: AdventureState): Command {
  const plan = foldPlan(state);
  return {
    type: 'FoldChapters',
    data: {
      summaryId: history.nextId('summary'),
      text: 'the story so far, from its chapters',
      chapterIds: plan?.chapters.map((chapter) => chapter.id) ?? [],
      startsFrom: plan?.current?.text ?? null,
    },
  };
}

function writeSummary(history: AdventureHistory, state: AdventureState): Command {
  const plan = summaryPlan(state);
  return {
    type: 'WriteSummary',
    data: {
      summaryId: history.nextId('summary'),
      text: 'so far',
      plan: {
        anchorActionId: plan?.anchorActionId ?? 'none',
        sourceStart: plan?.sourceStart ?? 0,
        sourceEnd: plan?.sourceEnd ?? 0,
        startsFrom: plan?.current?.text ?? null,
      },
    },
  };
}
