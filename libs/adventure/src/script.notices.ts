// What a player is told of the scripts' runs (spec/scripting.md §3.6): a short notice when a
// script failed and the turn went on without it, or when an append-only adventure discarded what
// a Context script made of the prompt. The owner's detail ("<script> (<hook>): <message>") stays
// in ScriptHookRan and the logs route; a notice names only the script, the hook and what kind of
// failure it was, never an engine message, a host path or a stack frame (S12).
import type { ScriptHookRanData, ScriptRecord, ScriptRunOutcome } from './script.events';

const FAILURE_WORDS: Partial<Record<ScriptRunOutcome, string>> = {
  failed: 'it threw an error',
  timeout: 'it ran out of time',
  memory: 'it ran out of memory',
  invalid: 'it returned something Chronicle cannot use',
  crashed: 'its sandbox stopped',
};

type NoticeRun = Pick<ScriptHookRanData, 'scriptId' | 'hook' | 'outcome' | 'contextChange'>;

/** The notice one run calls for, or null when it went as its script meant. */
export function scriptNotice(
  run: NoticeRun,
  scripts: readonly Pick<ScriptRecord, 'id' | 'name'>[],
): string | null {
  const name = scripts.find((script) => script.id === run.scriptId)?.name;
  const script = name ? `The script "${name}"` : 'A script';
  const failure = FAILURE_WORDS[run.outcome];
  if (failure) {
    return `${script} failed in its ${run.hook} hook (${failure}); the turn went on without it.`;
  }
  if (run.contextChange === 'discarded') {
    return `${script} changed the context in a way this adventure's append-only context mode does not allow; the prompt was sent without the change.`;
  }
  return null;
}

/** The notices of a turn's runs the projection still holds (its newest SCRIPT_RUNS_KEPT). */
export function scriptNoticesOfTurn(
  state: { scripts: readonly ScriptRecord[]; scriptRuns: readonly ScriptHookRanData[] },
  turnId: string,
): string[] {
  return state.scriptRuns
    .filter((run) => run.turnId === turnId)
    .map((run) => scriptNotice(run, state.scripts))
    .filter((notice): notice is string => notice !== null);
}

export type ScriptStreamFrame =
  | { event: 'message'; data: { text: string; visibleTo?: string[] } }
  | { event: 'notice'; data: { text: string; scriptId: string; hook: string } };

/**
 * The turn-stream frames of the script events an append recorded, in their order: `message`
 * for a script's `state.message`, `notice` for a failed or discarded run.
 */
export function scriptStreamFrames(
  events: readonly { type: string; data: unknown }[],
  scripts: readonly Pick<ScriptRecord, 'id' | 'name'>[],
): ScriptStreamFrame[] {
  const frames: ScriptStreamFrame[] = [];
  for (const event of events) {
    if (event.type === 'ScriptMessagePosted') {
      const data = event.data as { message: string; visibleTo?: string[] };
      frames.push({
        event: 'message',
        data: { text: data.message, ...(data.visibleTo ? { visibleTo: data.visibleTo } : {}) },
      });
    } else if (event.type === 'ScriptHookRan') {
      const run = event.data as ScriptHookRanData;
      const text = scriptNotice(run, scripts);
      if (text)
        frames.push({ event: 'notice', data: { text, scriptId: run.scriptId, hook: run.hook } });
    }
  }
  return frames;
}
