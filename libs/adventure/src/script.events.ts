// Scenario scripts attached to an adventure (spec/scripting.md): their sources as the owner
// saved them, and what their runs did. A run's outcome is a fact: a replay never runs a script
// (scripts use Math.random and Date), it folds these events.

/** A script as saved: AI Dungeon's Library/Input/Context/Output tabs. */
export interface ScriptRecord {
  id: string;
  name: string;
  library: string;
  input: string;
  context: string;
  output: string;
  enabled: boolean;
  /** 1 when added, + 1 per edit: the sandbox caches compiled code per version. */
  version: number;
}

export type ScriptChanges = Partial<
  Pick<ScriptRecord, 'name' | 'library' | 'input' | 'context' | 'output' | 'enabled'>
>;

export type ScriptAdded = { type: 'ScriptAdded'; data: { script: ScriptRecord } };
export type ScriptEdited = {
  type: 'ScriptEdited';
  data: { scriptId: string; changes: ScriptChanges };
};
/** Removed from the run order; its sources and runs stay in the log. */
export type ScriptRemoved = { type: 'ScriptRemoved'; data: { scriptId: string } };
export type ScriptsReordered = { type: 'ScriptsReordered'; data: { ids: string[] } };

export type ScriptEvent = ScriptAdded | ScriptEdited | ScriptRemoved | ScriptsReordered;
export type ScriptEventType = ScriptEvent['type'];

export const SCRIPT_EVENT_SCHEMA_VERSIONS: Readonly<Record<ScriptEventType, number>> = {
  ScriptAdded: 1,
  ScriptEdited: 1,
  ScriptRemoved: 1,
  ScriptsReordered: 1,
};

export function isScriptEvent(event: { type: string }): event is ScriptEvent {
  return Object.prototype.hasOwnProperty.call(SCRIPT_EVENT_SCHEMA_VERSIONS, event.type);
}
