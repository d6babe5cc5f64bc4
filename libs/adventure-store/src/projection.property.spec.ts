// The fast projection is an optimisation of the plain `evolve` (libs/adventure's
// adventure.evolve.ts), and the snapshot codec and the handler's cached states sit behind it.
// Over random histories of every kind of command (testing/random-history.ts, through the real
// deciders), event by event: the fast fold's state means what `evolve`'s does (compared through
// `plainView`), neither fold changes the state it is handed (both are deep-frozen), and a snapshot
// decodes to the state it was made of and folds on to the same end.
//
// Deterministic: seeds 1..PROPERTY_RUNS (25 unless set). A failure names its seed; rerun one with
// PROPERTY_SEED=<seed>, or explore others with PROPERTY_FIRST_SEED=<n>.

import {
  canonicalJson,
  evolve,
  initialPlainState,
  initialState,
  projectFrom,
  type AdventureState,
  type PlainAdventureState,
} from '@chronicle/adventure';
import { plainView } from '@chronicle/adventure/testing';
import { decodeSnapshot, encodeSnapshot } from './snapshot.codec';
import { Prng, randomHistory, type RandomHistory } from './testing/random-history';

const STEPS = 150;
const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
const FIRST = Number(process.env.PROPERTY_FIRST_SEED ?? 1);
const SEEDS = process.env.PROPERTY_SEED
  ? [Number(process.env.PROPERTY_SEED)]
  : Array.from({ length: RUNS }, (_, i) => FIRST + i);

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Whether two JSON values are equal, object keys in any order (jsonb keeps no key order). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every(
    (key) =>
      Object.prototype.hasOwnProperty.call(b, key) &&
      sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

/** Where two JSON values first differ, as a path, with both sides there. */
function firstDifference(a: unknown, b: unknown, path = '$'): string | null {
  if (sameJson(a, b)) return null;
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of [...keys].sort()) {
      const found = firstDifference(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
      if (found) return found;
    }
  }
  return `${path}: fast ${JSON.stringify(a)?.slice(0, 300)} / evolve ${JSON.stringify(b)?.slice(0, 300)}`;
}

function sameMeaning(fast: AdventureState, plain: PlainAdventureState, where: string): void {
  const view = plainView(fast);
  if (sameJson(view, plain)) return;
  throw new Error(`${where}: the fast fold differs from evolve at ${firstDifference(view, plain)}`);
}

const histories = new Map<number, RandomHistory>();

function historyOf(seed: number): RandomHistory {
  let history = histories.get(seed);
  if (!history) {
    history = randomHistory(seed, STEPS);
    histories.set(seed, history);
  }
  return history;
}

/** Runs `check` for one seed; a failure says which seed and what it did. */
function forSeed(seed: number, check: (history: RandomHistory) => void): void {
  const history = historyOf(seed);
  try {
    check(history);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `seed ${seed} (rerun: PROPERTY_SEED=${seed} npx jest ${__filename.split('/').slice(-4).join('/')}); ` +
        `commands accepted: ${history.accepted.join(' ')}\n${message}`,
    );
  }
}

describe('the projection over random histories', () => {
  it('given random histories, then every generator run draws commands of every kind and most are accepted', () => {
    const kinds = new Set<string>();
    let accepted = 0;
    let refused = 0;
    for (const seed of SEEDS.slice(0, 10)) {
      const history = historyOf(seed);
      history.accepted.forEach((type) => kinds.add(type));
      accepted += history.accepted.length;
      refused += history.refused;
    }
    if (!process.env.PROPERTY_SEED) {
      // A generator that only ever got refused would prove nothing.
      expect(accepted).toBeGreaterThan(refused);
      for (const kind of [
        'SubmitAction',
        'RecordNarration',
        'RequestRetry',
        'Undo',
        'Redo',
        'MoveHead',
        'EditAction',
        'EraseAction',
        'CorrectNarrativeState',
        'RetconStateEvent',
        'ImportStoryCards',
        'StopTurnByScript',
        'RecordNarrationFailure',
        'WriteMemory',
        'WriteSummary',
        'AddMemory',
      ]) {
        expect(kinds).toContain(kind);
      }
    }
  });

  it('when each event is folded by the fast projector and by evolve, then both mean the same state and neither changes its input', () => {
    for (const seed of SEEDS) {
      forSeed(seed, ({ events }) => {
        let fast: AdventureState = deepFreeze(initialState());
        let plain: PlainAdventureState = deepFreeze(initialPlainState());
        for (const event of events) {
          deepFreeze(event);
          fast = deepFreeze(projectFrom(fast, [event]));
          plain = deepFreeze(evolve(plain, event));
          sameMeaning(fast, plain, `after ${event.type} at version ${event.version}`);
        }
        // The whole fold in one go (one copy, then in place) ends at the same state.
        sameMeaning(projectFrom(initialState(), events), plain, 'after the whole fold');
      });
    }
  });

  it('when a snapshot is taken anywhere in a history, then it decodes to the same state and folds on to the same end', () => {
    for (const seed of SEEDS) {
      forSeed(seed, ({ events }) => {
        const at = new Prng(seed).int(events.length + 1);
        const before = projectFrom(initialState(), events.slice(0, at));
        const decoded = decodeSnapshot(encodeSnapshot(before));
        if (!decoded) throw new Error('the snapshot did not decode');
        expect(canonicalJson(decoded)).toBe(canonicalJson(before));
        // A loaded snapshot (or the handler's cached state) with the events past it.
        const end = projectFrom(decoded, events.slice(at));
        let plain = initialPlainState();
        for (const event of events) plain = evolve(plain, event);
        sameMeaning(end, plain, `from a snapshot at version ${at}`);
      });
    }
  });
});
