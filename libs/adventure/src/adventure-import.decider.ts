// An imported log is a command like any other: the file is read at the edge (each line parsed and
// upcast to this build's events), and this decider holds the events to the rules a live adventure
// keeps — the same field checks, limits and decider preconditions as the API (checkRecordedEvent),
// folded through the projector — before the handler appends them, all or none, at version 0.
// The events keep the ids and metadata they were recorded with, so the story tree and the usage
// the log holds come along; a turn still in flight in the export is closed as failed, because its
// job belongs to the installation (or adventure) the file came from.
import { sourceSizeProblems } from '@chronicle/scripting';
import { ConflictError, InvalidCommandError } from './adventure.errors';
import type { AdventureEvent, RecordedAdventureEvent } from './adventure.events';
import { evolveInPlace } from './adventure.projector';
import { initialState, type AdventureState } from './adventure.state';
import { checkRecordedEvent } from './event.validation';

/**
 * An event as a decider hands it to the command handler. One it makes has neither id nor
 * metadata: the ids derive from the command's key and the metadata is the command's. One
 * recorded elsewhere (an import) keeps its own.
 */
export type DecidedEvent = AdventureEvent & { id?: string; metadata?: Record<string, unknown> };

/** An exported event as this build reads it: upcast, with the id and metadata it was recorded with. */
export type ImportedEvent = AdventureEvent & { id: string; metadata: Record<string, unknown> };

export interface ImportAdventure {
  type: 'ImportAdventure';
  key?: string;
  data: {
    /** The adventure the export was taken from. */
    sourceAdventureId: string;
    /** The whole log, in order: the first is its AdventureCreated. */
    events: ImportedEvent[];
  };
}

export function isImportCommand(command: { type: string }): command is ImportAdventure {
  return command.type === 'ImportAdventure';
}

/** An imported event this build would not have written: the log's version names it. */
export class ImportedEventRefusedError extends InvalidCommandError {
  constructor(
    readonly version: number,
    readonly problem: string,
  ) {
    super(`the imported event at version ${version}: ${problem}`);
    this.name = 'ImportedEventRefusedError';
  }
}

/** Why an imported turn that was in flight ends as failed. */
export const IMPORTED_IN_FLIGHT_MESSAGE =
  'this turn was still being narrated when the adventure was exported; it was not narrated here — retry it, or act again';

/** The events an import appends: the imported ones, checked, and the close of a turn in flight. */
export function decideImport(command: ImportAdventure, state: AdventureState): DecidedEvent[] {
  if (state.id !== null || state.version !== 0) {
    throw new ConflictError(`adventure ${state.id ?? ''} already exists; import into a new one`);
  }
  const { events, sourceAdventureId } = command.data;
  const draft = initialState();
  events.forEach((event, index) => {
    const version = index + 1;
    const refuse = (problem: string): never => {
      throw new ImportedEventRefusedError(version, problem);
    };
    if (index === 0 && event.type !== 'AdventureCreated') {
      refuse(`the first event must be AdventureCreated, not ${event.type}`);
    }
    if (index > 0 && event.type === 'AdventureCreated') {
      refuse('AdventureCreated may only come first');
    }
    const sizes = scriptSizeProblems(event);
    if (sizes) refuse(sizes);
    try {
      checkRecordedEvent(event, draft);
    } catch (error) {
      refuse(`${event.type}: ${messageOf(error)}`);
    }
    try {
      evolveInPlace(draft, {
        type: event.type,
        data: event.data,
        version,
      } as RecordedAdventureEvent);
    } catch (error) {
      refuse(`the projector refuses this ${event.type} event: ${messageOf(error)}`);
    }
  });
  const closing = [...closeInFlight(draft, sourceAdventureId), ...resetRoom(draft, events)];
  return closing.length === 0 ? events : [...events, ...closing];
}

/**
 * The room goes back to the importer alone: the members, bans and invites of the exported
 * adventure are users of the installation (or adventure) it came from, and must never be given
 * this one. Their events stay in the log, as history; the import report names who was dropped.
 */
function resetRoom(draft: AdventureState, events: ImportedEvent[]): DecidedEvent[] {
  const importer = (events[0].data as { ownerId: string }).ownerId;
  const { room } = draft;
  const others = room.members.filter((m) => m.userId !== importer && m.status !== 'left');
  const alone =
    draft.ownerId === importer &&
    room.members.every((m) => m.userId === importer) &&
    room.invites.length === 0 &&
    room.banned.length === 0;
  if (alone) return [];
  return [
    {
      type: 'RoomReset',
      data: {
        hostId: importer,
        droppedMembers: others.map((m) => m.userId),
        droppedInvites: room.invites.length,
        reason: 'import',
      },
      metadata: { roomResetOnImport: true },
    },
  ];
}

function closeInFlight(draft: AdventureState, sourceAdventureId: string): DecidedEvent[] {
  if (!draft.inFlight) return [];
  // Never re-enqueued (its job id belongs to where it came from): the new adventure takes
  // actions at once. `lost`: its job stayed behind with the installation it came from.
  const closed: DecidedEvent = {
    type: 'NarrationFailed',
    data: {
      turnId: draft.inFlight.turnId,
      code: 'lost',
      message: IMPORTED_IN_FLIGHT_MESSAGE,
      attempts: 0,
    },
    metadata: { importedFrom: { adventureId: sourceAdventureId }, closedOnImport: true },
  };
  return [closed];
}

/**
 * An imported script is held to the sizes a saved one is (its syntax is the sandbox's to judge
 * when it runs: a script that does not compile fails its runs, never a turn).
 */
function scriptSizeProblems(event: AdventureEvent): string | null {
  if (event.type !== 'ScriptAdded' && event.type !== 'ScriptEdited') return null;
  const sources = (
    event.type === 'ScriptAdded'
      ? (event.data as { script?: unknown }).script
      : (event.data as { changes?: unknown }).changes
  ) as Record<string, unknown> | undefined;
  const problems = sourceSizeProblems(
    Object.fromEntries(
      Object.entries(sources ?? {}).filter(([, value]) => typeof value === 'string'),
    ),
  );
  return problems.length > 0 ? problems.map((p) => p.message).join('; ') : null;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
