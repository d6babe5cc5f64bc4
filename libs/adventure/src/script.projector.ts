// Folds the script events into the projection's `scripts`, in run order.
import { RECENT_TURNS_KEPT, nodeOf, type AdventureState } from './adventure.state';
import { newStateRecord, resolveRecord } from './script-state.store';
import { SCRIPT_RUNS_KEPT, type ScriptEvent } from './script.events';

export function evolveScripts(draft: AdventureState, event: ScriptEvent): void {
  switch (event.type) {
    case 'ScriptAdded':
      draft.scripts = [...draft.scripts, event.data.script];
      return;
    case 'ScriptEdited':
      draft.scripts = draft.scripts.map((script) =>
        script.id === event.data.scriptId
          ? { ...script, ...event.data.changes, version: script.version + 1 }
          : script,
      );
      return;
    case 'ScriptRemoved':
      draft.scripts = draft.scripts.filter((script) => script.id !== event.data.scriptId);
      return;
    case 'ScriptStateChanged': {
      const { actionId, scriptId, state } = event.data;
      ownScriptTables(draft);
      const recordId = `${draft.version}:${scriptId}`;
      draft.scriptStateRecords[recordId] = newStateRecord(
        draft.scriptStateRecords,
        nearestRecord(draft, scriptId, actionId),
        state,
      );
      draft.scriptStates[actionId] = {
        ...(draft.scriptStates[actionId] ?? {}),
        [scriptId]: recordId,
      };
      return;
    }
    case 'ScriptHookRan':
      draft.scriptRuns = [...draft.scriptRuns, event.data].slice(-SCRIPT_RUNS_KEPT);
      return;
    case 'ScriptMessagePosted':
      return;
    case 'TurnStoppedByScript':
      draft.recentTurns.push({
        turnId: event.data.turnId,
        status: 'stopped',
        actionId: null,
        error: event.data.message,
        code: null,
      });
      if (draft.recentTurns.length > RECENT_TURNS_KEPT) draft.recentTurns.shift();
      return;
    case 'StoryCardsReordered': {
      const byId = new Map(draft.cards.map((card) => [card.id, card]));
      const ordered = event.data.order.map((id) => byId.get(id)).filter((c) => c !== undefined);
      // Cards the order does not name (added since by the player) keep their place at the end.
      const named = new Set(event.data.order);
      draft.cards = [...ordered, ...draft.cards.filter((card) => !named.has(card.id))];
      return;
    }
    case 'ScriptsReordered': {
      const byId = new Map(draft.scripts.map((script) => [script.id, script]));
      draft.scripts = event.data.ids
        .map((id) => byId.get(id))
        .filter((script) => script !== undefined);
      return;
    }
  }
}

/**
 * A script's state at the head: the newest one recorded on the head's path, skipping `exclude`
 * (the take a retry replaces). `{}` before the script ever changed it. A copy: the caller's own.
 */
export function scriptStateAtHead(
  state: Pick<AdventureState, 'path' | 'scriptStates' | 'scriptStateRecords'>,
  scriptId: string,
  exclude: string | null = null,
): Record<string, unknown> {
  for (let depth = state.path.length - 1; depth >= 0; depth--) {
    const id = state.path[depth].id;
    if (id === exclude) continue;
    const recorded = state.scriptStates[id]?.[scriptId];
    if (recorded) return resolveRecord(state.scriptStateRecords, recorded);
  }
  return {};
}

/**
 * The record a new state at `actionId` is best made from: the nearest one on the path at or
 * above that node (any record would give a correct patch; the nearest gives the smallest).
 */
function nearestRecord(draft: AdventureState, scriptId: string, actionId: string): string | null {
  const node = nodeOf(draft, actionId);
  const from = node && draft.path[node.depth]?.id === actionId ? node.depth : draft.path.length - 1;
  for (let depth = from; depth >= 0; depth--) {
    const recorded = draft.scriptStates[draft.path[depth].id]?.[scriptId];
    if (recorded) return recorded;
  }
  return null;
}

/**
 * A copy of a projection shares its script tables with its source (the projection is never
 * changed in place: see adventure.projector.ts), so once a copy is made both tables count as
 * shared, and the first write of a fold, on either side, copies them: a batch of events costs
 * one copy of the tables, not one per event.
 */
const sharedTables = new WeakSet<object>();

/** Called when `source` is copied: its tables are shared from now on. */
export function shareScriptTables(source: AdventureState): void {
  sharedTables.add(source.scriptStates);
  sharedTables.add(source.scriptStateRecords);
}

function ownScriptTables(draft: AdventureState): void {
  if (!sharedTables.has(draft.scriptStates) && !sharedTables.has(draft.scriptStateRecords)) return;
  draft.scriptStates = { ...draft.scriptStates };
  draft.scriptStateRecords = { ...draft.scriptStateRecords };
}
