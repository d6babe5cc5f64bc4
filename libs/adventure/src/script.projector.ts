// Folds the script events into the projection's `scripts`, in run order.
import { RECENT_TURNS_KEPT, type AdventureState } from './adventure.state';
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
      draft.scriptStates = {
        ...draft.scriptStates,
        [actionId]: { ...(draft.scriptStates[actionId] ?? {}), [scriptId]: state },
      };
      return;
    }
    case 'ScriptHookRan':
      draft.scriptRuns = [...draft.scriptRuns, event.data].slice(-SCRIPT_RUNS_KEPT);
      return;
    case 'ScriptMessagePosted':
      return;
    case 'TurnStoppedByScript':
      if (draft.inFlight?.turnId === event.data.turnId) draft.inFlight = null;
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
 * (the take a retry replaces). `{}` before the script ever changed it.
 */
export function scriptStateAtHead(
  state: Pick<AdventureState, 'path' | 'scriptStates'>,
  scriptId: string,
  exclude: string | null = null,
): Record<string, unknown> {
  for (let depth = state.path.length - 1; depth >= 0; depth--) {
    const id = state.path[depth].id;
    if (id === exclude) continue;
    const recorded = state.scriptStates[id]?.[scriptId];
    if (recorded) return recorded;
  }
  return {};
}
