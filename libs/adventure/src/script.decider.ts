// What the owner's script commands append. Pure: ids come from the caller, and the syntax of a
// source is checked before a command is made (only a JavaScript engine can say, and the engine
// lives in the sandbox); sizes, names and the run order are checked here.
import { SCRIPT_LIMITS, sourceSizeProblems } from '@chronicle/scripting';
import {
  InvalidCommandError,
  LimitExceededError,
  NotFoundError,
  ConflictError,
} from './adventure.errors';
import type { AdventureState } from './adventure.state';
import { checkId, checkText } from './adventure.validation';
import type { ScriptChanges, ScriptEvent, ScriptRecord } from './script.events';

export interface ScriptInput {
  id: string;
  name: string;
  library?: string;
  input?: string;
  context?: string;
  output?: string;
  enabled?: boolean;
}

export type ScriptCommand =
  | { type: 'AddScript'; data: { script: ScriptInput } }
  | { type: 'EditScript'; data: { scriptId: string; changes: ScriptChanges } }
  | { type: 'RemoveScript'; data: { scriptId: string } }
  | { type: 'ReorderScripts'; data: { ids: string[] } };

const SOURCE_KEYS = ['library', 'input', 'context', 'output'] as const;

function checkSources(changes: ScriptChanges): void {
  for (const key of SOURCE_KEYS) {
    const value = changes[key];
    if (value !== undefined && typeof value !== 'string') {
      throw new InvalidCommandError(`${key} must be a string of JavaScript`);
    }
  }
  const problems = sourceSizeProblems(changes);
  if (problems.length > 0) {
    throw new LimitExceededError(problems.map((p) => p.message).join('; '));
  }
}

function checkName(name: unknown): string {
  return checkText('name', name, { max: SCRIPT_LIMITS.nameChars, required: true });
}

function requireScript(state: AdventureState, scriptId: string): ScriptRecord {
  const script = state.scripts.find((s) => s.id === scriptId);
  if (!script) throw new NotFoundError(`script ${scriptId} not found in this adventure`);
  return script;
}

/** The scripts a CreateAdventure or an AddScript brings: checked, as ScriptAdded events. */
export function scriptsAdded(inputs: readonly ScriptInput[], existing: number): ScriptEvent[] {
  if (existing + inputs.length > SCRIPT_LIMITS.scriptsPerAdventure) {
    throw new LimitExceededError(
      `an adventure holds at most ${SCRIPT_LIMITS.scriptsPerAdventure} scripts; remove one first`,
    );
  }
  const ids = new Set<string>();
  return inputs.map((input) => {
    const id = checkId('script.id', input.id);
    if (ids.has(id)) throw new ConflictError(`script ${id} is given twice; send a new id`);
    ids.add(id);
    const script: ScriptRecord = {
      id,
      name: checkName(input.name),
      library: input.library ?? '',
      input: input.input ?? '',
      context: input.context ?? '',
      output: input.output ?? '',
      enabled: input.enabled ?? true,
      version: 1,
    };
    checkSources(script);
    if (typeof script.enabled !== 'boolean') {
      throw new InvalidCommandError('enabled must be true or false');
    }
    return { type: 'ScriptAdded', data: { script } };
  });
}

export function decideScript(command: ScriptCommand, state: AdventureState): ScriptEvent[] {
  if (state.id === null) throw new NotFoundError('adventure not found; create it first');
  switch (command.type) {
    case 'AddScript': {
      if (state.scripts.some((s) => s.id === command.data.script.id)) {
        throw new ConflictError(`script ${command.data.script.id} already exists; send a new id`);
      }
      return scriptsAdded([command.data.script], state.scripts.length);
    }
    case 'EditScript': {
      const script = requireScript(state, command.data.scriptId);
      const changes = { ...command.data.changes };
      if (changes.name !== undefined) changes.name = checkName(changes.name);
      if (changes.enabled !== undefined && typeof changes.enabled !== 'boolean') {
        throw new InvalidCommandError('enabled must be true or false');
      }
      checkSources(changes);
      const changed = Object.fromEntries(
        Object.entries(changes).filter(
          ([key, value]) => value !== undefined && script[key as keyof ScriptRecord] !== value,
        ),
      ) as ScriptChanges;
      if (Object.keys(changed).length === 0) return [];
      return [{ type: 'ScriptEdited', data: { scriptId: script.id, changes: changed } }];
    }
    case 'RemoveScript':
      requireScript(state, command.data.scriptId);
      return [{ type: 'ScriptRemoved', data: { scriptId: command.data.scriptId } }];
    case 'ReorderScripts': {
      const ids = command.data.ids;
      const current = state.scripts.map((s) => s.id);
      const same =
        Array.isArray(ids) &&
        ids.length === current.length &&
        new Set(ids).size === ids.length &&
        ids.every((id) => current.includes(id));
      if (!same) {
        throw new InvalidCommandError(
          `ids must list every script of the adventure once, in the new order: ${current.join(', ')}`,
        );
      }
      if (ids.every((id, i) => current[i] === id)) return [];
      return [{ type: 'ScriptsReordered', data: { ids: [...ids] } }];
    }
  }
}
