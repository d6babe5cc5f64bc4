// What a player's memory and summary commands append. Pure, like `decide`: ids come from the
// caller. The memory worker's commands (what the model wrote) are decided in libs/memory
// (`decideMemoryWork`), beside the cadence that says what is due.

import { InvalidCommandError, LimitExceededError, NotFoundError } from './adventure.errors';
import { LIMITS } from './adventure.limits';
import type { AdventureState } from './adventure.state';
import type { MemoryEvent } from './memory.events';
import { currentSummary, findMemory } from './memory.queries';

export type MemoryCommand =
  | { type: 'AddMemory'; data: { memoryId: string; text: string } }
  | { type: 'EditMemory'; data: { memoryId: string; text: string } }
  | { type: 'PinMemory'; data: { memoryId: string } }
  | { type: 'UnpinMemory'; data: { memoryId: string } }
  | { type: 'ForgetMemory'; data: { memoryId: string } }
  | { type: 'DeleteMemory'; data: { memoryId: string } }
  | { type: 'EditSummary'; data: { summaryId: string; text: string } };

const MEMORY_COMMANDS: ReadonlySet<string> = new Set<MemoryCommand['type']>([
  'AddMemory',
  'EditMemory',
  'PinMemory',
  'UnpinMemory',
  'ForgetMemory',
  'DeleteMemory',
  'EditSummary',
]);

export function isMemoryCommand(command: { type: string }): command is MemoryCommand {
  return MEMORY_COMMANDS.has(command.type);
}

function checkMemoryText(text: unknown, max: number = LIMITS.memoryTextChars): string {
  if (typeof text !== 'string' || text.trim() === '') {
    throw new InvalidCommandError('text is required: write what should be remembered');
  }
  if (text.length > max) {
    throw new InvalidCommandError(`text is longer than ${max} characters; keep it shorter`);
  }
  return text.trim();
}

function requireMemory(state: AdventureState, memoryId: string) {
  const memory = findMemory(state, memoryId);
  if (!memory) throw new NotFoundError(`memory ${memoryId} not found in this adventure`);
  return memory;
}

/**
 * The id of a new summary version, which no version may hold yet: the fold refuses a second
 * version under one id, so it is refused here, as the client's mistake.
 */
function newSummaryId(state: AdventureState, summaryId: string): string {
  if (state.memory.summaries.some((summary) => summary.id === summaryId)) {
    throw new InvalidCommandError(`summary ${summaryId} already exists; send a new id`);
  }
  return summaryId;
}

export function decideMemory(command: MemoryCommand, state: AdventureState): MemoryEvent[] {
  if (state.id === null) throw new NotFoundError('adventure not found; create it first');
  switch (command.type) {
    case 'AddMemory': {
      const { memoryId } = command.data;
      if (findMemory(state, memoryId)) {
        throw new InvalidCommandError(`memory ${memoryId} already exists; send a new id`);
      }
      if (state.memory.memories.length >= LIMITS.memoriesPerAdventure) {
        throw new LimitExceededError(
          `an adventure holds at most ${LIMITS.memoriesPerAdventure} memories (limit memoriesPerAdventure); delete one first`,
        );
      }
      return [
        {
          type: 'MemoryWritten',
          data: {
            memoryId,
            text: checkMemoryText(command.data.text),
            sourceStart: null,
            sourceEnd: null,
            anchorActionId: state.head ?? '',
            sourceActionIds: [],
            createdBy: 'player',
          },
        },
      ];
    }
    case 'EditMemory': {
      const memory = requireMemory(state, command.data.memoryId);
      const text = checkMemoryText(command.data.text);
      if (text === memory.text) return [];
      return [{ type: 'MemoryEdited', data: { memoryId: memory.id, text } }];
    }
    case 'PinMemory': {
      const memory = requireMemory(state, command.data.memoryId);
      return memory.pinned ? [] : [{ type: 'MemoryPinned', data: { memoryId: memory.id } }];
    }
    case 'UnpinMemory': {
      const memory = requireMemory(state, command.data.memoryId);
      return memory.pinned ? [{ type: 'MemoryUnpinned', data: { memoryId: memory.id } }] : [];
    }
    case 'ForgetMemory': {
      const memory = requireMemory(state, command.data.memoryId);
      if (memory.forgotten) return [];
      return [{ type: 'MemoryForgotten', data: { memoryIds: [memory.id], reason: 'player' } }];
    }
    case 'DeleteMemory': {
      const memory = requireMemory(state, command.data.memoryId);
      return [{ type: 'MemoryDeleted', data: { memoryId: memory.id } }];
    }
    case 'EditSummary': {
      // A summary is prose the player may keep long; a memory is one recollection.
      const text = checkMemoryText(command.data.text, LIMITS.textChars);
      const current = currentSummary(state);
      const head = state.head ?? '';
      // An edit at the current version's anchor rewrites it; anywhere else it is a new version.
      const inPlace = current !== null && current.anchorActionId === head;
      if (inPlace && current.text === text) return [];
      return [
        {
          type: 'SummaryWritten',
          data: {
            summaryId: inPlace ? current.id : newSummaryId(state, command.data.summaryId),
            text,
            anchorActionId: head,
            sourceStart: null,
            sourceEnd: null,
            handEdited: true,
            replacesSummaryId: inPlace ? current.id : null,
            chapterIds: [],
          },
        },
      ];
    }
    default: {
      const unknown: { type: string } = command;
      throw new InvalidCommandError(`unknown command ${JSON.stringify(unknown.type)}`);
    }
  }
}
