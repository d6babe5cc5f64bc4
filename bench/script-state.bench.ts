// What a long scripted adventure's projection holds of its scripts' states: 2,000 turns of an
// Auto-Cards-sized state (~3 KB: a config text, a turn counter, a rolling list of recent card
// titles) changed every turn, a retry every 10th turn, and an undo/redo now and then. Reports the
// script tables' and the whole projection's JSON (what a snapshot stores), the heap the folded
// projection keeps (with --expose-gc), the fold's time and a state read at the head.
import { project, scriptStateAtHead, type AdventureState } from '@chronicle/adventure';
import { AdventureHistory } from '@chronicle/adventure/testing';
import { ms, timeRuns } from './stats';

const TURNS = 2_000;
const CONFIG = 'Auto-Cards config: '.padEnd(2_800, 'cards, memories, titles; ');

function scriptedAdventure(turns: number): AdventureHistory {
  const history = AdventureHistory.create();
  history.run({ type: 'AddScript', data: { script: { id: 'auto-cards', name: 'Auto-Cards' } } });
  const titles: string[] = [];
  for (let i = 0; i < turns; i++) {
    history.turn('do', `look around ${i}`, { text: `The lamp turns (${i}).` });
    titles.push(`Card ${i}`);
    if (titles.length > 20) titles.shift();
    history.append({
      type: 'ScriptStateChanged',
      data: {
        scriptId: 'auto-cards',
        actionId: history.head,
        state: { AutoCards: { config: CONFIG, turn: i, titles: [...titles] }, counter: i },
      },
    });
    if (i % 10 === 9) history.retry({ text: `Another take (${i}).` });
    if (i % 50 === 49) history.undo().redo();
  }
  return history;
}

function scriptTablesJson(state: AdventureState): number {
  const loose = state as unknown as Record<string, unknown>;
  return JSON.stringify({
    scriptStates: loose.scriptStates,
    scriptStateRecords: loose.scriptStateRecords ?? {},
  }).length;
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapMb(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** The heap `make`'s result keeps, across a full collection either side. */
function retainedBy(make: () => unknown): number {
  const before = heapMb();
  const value = make();
  const after = heapMb();
  return value === undefined ? 0 : after - before;
}

export default async function scriptStateBench(): Promise<string> {
  const events = scriptedAdventure(TURNS).events;
  const state = project(events);
  // The heap a projection decoded from its snapshot keeps (how the API's and the workers'
  // caches mostly hold one): its JSON parsed afresh, measured across a full collection.
  const snapshot = JSON.stringify(state);
  const retainedMb = retainedBy(() => JSON.parse(snapshot));
  const fold = await timeRuns(5, () => {
    project(events);
  });
  const read = await timeRuns(200, () => {
    scriptStateAtHead(state, 'auto-cards');
  });
  const tables = scriptTablesJson(state);
  const whole = snapshot.length;
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  return [
    `## Script state in the projection: ${TURNS} turns, ${events.length} events`,
    '',
    '| measure | value |',
    '|---|---|',
    `| script tables, JSON | ${kib(tables)} |`,
    `| whole projection, JSON | ${kib(whole)} |`,
    `| heap of the projection decoded from it | ${gc ? `${retainedMb.toFixed(1)} MB` : 'run with --expose-gc'} |`,
    `| fold of every event, p50 | ${ms(fold.p50)} |`,
    `| state at the head, p50 | ${ms(read.p50)} |`,
  ].join('\n');
}
