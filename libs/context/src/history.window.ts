import type { ReadOlder, ReadOlderSync, WindowAction } from './context.types';

/** Actions read in the first slice. It also covers the rejection lookup (`NPC_WINDOW`). */
export const WINDOW_START = 32;
/** Safety margin over the measured average when sizing the next slice. */
export const WINDOW_MARGIN = 0.15;
/** The least a slice grows by, so a run of huge actions still makes progress. */
export const WINDOW_STEP = 8;

export interface WindowOptions {
  /** The retried take: skipped, and not counted towards the budget. */
  excludeActionId?: string | null;
  /**
   * The newest rows the caller has already read (newest last), e.g. the first slice it used
   * for `contextBudget`. Reading continues below them.
   */
  prefetched?: readonly WindowAction[];
}

/**
 * A story action has prose that is not blank; a newline, CR or tab is blank like a space. Kept
 * to those four characters so that the in-memory rule and a SQL `btrim(text, E' \n\r\t')` agree.
 */
export function isStoryText(text: string): boolean {
  return /[^ \n\r\t]/.test(text);
}

type ReadRequest = { alreadyRead: number; count: number };

// The algorithm, written once as a generator that yields its reads so that the async and the
// sync readers share it.
function* cover(
  available: number,
  options: WindowOptions,
): Generator<ReadRequest, WindowAction[], WindowAction[]> {
  const exclude = options.excludeActionId ?? null;
  let rows: WindowAction[] = [...(options.prefetched ?? [])];
  let rawRead = rows.length;
  let exhausted = false;
  let size = WINDOW_START;
  for (;;) {
    if (!exhausted && rawRead < size) {
      const wanted = size - rawRead;
      const older = yield { alreadyRead: rawRead, count: wanted };
      if (older.length < wanted) exhausted = true;
      rows = older.concat(rows);
      rawRead += older.length;
    }
    let sum = 0;
    let kept = 0;
    for (const action of rows) {
      if (action.id === exclude) continue;
      sum += action.tokens;
      kept += 1;
    }
    // History pays each action's tokens plus a separator, and the card trigger text is the
    // joined window, so once the texts alone exceed `available` neither can reach past the
    // window. Real cached counts, not an estimate: this is what makes the window provably
    // large enough.
    if (sum > available || exhausted) {
      return exclude === null ? rows : rows.filter((action) => action.id !== exclude);
    }
    const average = kept > 0 ? sum / kept : 0;
    const estimate = average > 0 ? Math.floor((available / average) * (1 + WINDOW_MARGIN)) : 0;
    size = Math.max(size + WINDOW_STEP, estimate + WINDOW_STEP);
  }
}

/**
 * The newest story actions (newest last) that provably cover `available` tokens, or the whole
 * story when it is shorter.
 *
 * Only the newest actions can reach the prompt, because the builder either truncates the text
 * to `available` tokens or stops at the budget. Reading a window that is provably larger than
 * that and no larger keeps a turn's cost flat: reading the whole story each turn cost the
 * predecessor 839 kB at turn 200, against 129 kB for the covering window.
 *
 * Starts with the newest `WINDOW_START` actions and, while their cached token counts do not
 * exceed `available`, grows to max(size + 8, floor(available / average × 1.15) + 8), each
 * round reading only the older rows.
 */
export async function windowCovering(
  readOlder: ReadOlder,
  available: number,
  options: WindowOptions = {},
): Promise<WindowAction[]> {
  const steps = cover(available, options);
  let step = steps.next([]);
  while (!step.done) {
    step = steps.next(await readOlder(step.value.alreadyRead, step.value.count));
  }
  return step.value;
}

/** `windowCovering` over a synchronous reader (rows already in memory). */
export function windowCoveringSync(
  readOlder: ReadOlderSync,
  available: number,
  options: WindowOptions = {},
): WindowAction[] {
  const steps = cover(available, options);
  let step = steps.next([]);
  while (!step.done) {
    step = steps.next(readOlder(step.value.alreadyRead, step.value.count));
  }
  return step.value;
}

/**
 * A reader over a story already in memory (oldest first), e.g. the full history a script
 * gets, or a test's fixture. Blank actions are not story actions and are skipped.
 */
export function memoryReader(path: readonly WindowAction[]): ReadOlderSync {
  const story = path.filter((action) => isStoryText(action.text));
  return (alreadyRead, count) => {
    const end = Math.max(0, story.length - alreadyRead);
    return story.slice(Math.max(0, end - count), end);
  };
}
