// Folds the script events into the projection's `scripts`, in run order.
import type { AdventureState } from './adventure.state';
import type { ScriptEvent } from './script.events';

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
    case 'ScriptsReordered': {
      const byId = new Map(draft.scripts.map((script) => [script.id, script]));
      draft.scripts = event.data.ids
        .map((id) => byId.get(id))
        .filter((script) => script !== undefined);
      return;
    }
  }
}
