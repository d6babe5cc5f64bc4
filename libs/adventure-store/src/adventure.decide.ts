// The one decider the command handler asks: every command an adventure accepts, from the API,
// the context worker and the memory worker, goes through here to the pure decider that owns it.
import {
  decide,
  decideImport,
  decideMemory,
  isImportCommand,
  isMemoryCommand,
  type AdventureCommand,
  type AdventureState,
  type DecidedEvent,
  type ImportAdventure,
  type DecideContext,
  type Keyed,
  type MemoryCommand,
} from '@chronicle/adventure';
import { tokenizer } from '@chronicle/context';
import { defuseStateFences } from '@chronicle/narrative';
import { decideMemoryWork, isMemoryWorkCommand, type MemoryWorkCommand } from '@chronicle/memory';

/** Anything `AdventureCommandHandler.handle` accepts. */
export type Command = Keyed<AdventureCommand | MemoryCommand | MemoryWorkCommand> | ImportAdventure;

/** An action's tokens as the prompt sends it: defused (see storyReader), so the cache is exact. */
export const countTokens: DecideContext['countTokens'] = (text, encoding) =>
  tokenizer(encoding).count(defuseStateFences(text));
const DECIDE_CONTEXT: DecideContext = { countTokens };

export function decideCommand(command: Command, state: AdventureState): DecidedEvent[] {
  if (isImportCommand(command)) return decideImport(command, state);
  if (isMemoryWorkCommand(command)) return decideMemoryWork(command, state);
  if (isMemoryCommand(command)) return decideMemory(command, state);
  return decide(command, state, DECIDE_CONTEXT);
}
