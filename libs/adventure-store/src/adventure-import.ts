import {
  InvalidCommandError,
  ImportedEventRefusedError,
  isAdventureEventType,
  upcast,
  type AdventureEvent,
  type ImportAdventure,
  type ImportedEvent,
} from '@chronicle/adventure';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, type ExportHeader } from './adventure-export';
import { deterministicEventId, type AdventureCommandHandler } from './adventure.command-handler';

// Reads an export back as a new adventure: the edge of the ImportAdventure command. Here each
// line is parsed and upcast to this build's events, and the installation's own policy (which
// models it offers) is applied; `decideImport` (libs/adventure) then holds the whole log to the
// rules a live adventure keeps, and the command handler appends it in one statement at version
// 0, so a bad file is refused with the line and the field that are wrong, and the store never
// holds half an adventure. The new adventure gets a new id and its importer as owner (both live
// in AdventureCreated), and its turns new ids in its own namespace (`turnIdOf`), so no imported
// value names another adventure's turn stream or job; every other id (actions, events,
// memories) is kept, so the story tree holds.

/** A refused import: 400, naming the line (1 is the header) and what is wrong with it. */
export class ImportRefusedError extends InvalidCommandError {
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(`import refused: line ${line}: ${problem}; nothing was imported`);
    this.name = 'ImportRefusedError';
  }
}

export interface ImportTarget {
  adventureId: string;
  ownerId: string;
  /** The new adventure's id for an exported turn id (the API's turnIdFor; default: unchanged). */
  turnIdOf?: (turnId: string) => string;
  /** Refuses a settings.model the installation does not offer (throws with a message). */
  checkModel?: (model: string) => void;
  /** Who imports: kept in each imported event's metadata as `importedBy`. */
  actor?: string;
}

export interface ParsedImport {
  header: ExportHeader;
  /** The command that imports the file's events. */
  command: ImportAdventure;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads a whole export into the command that imports it for `target`; throws ImportRefusedError
 * for a line that is not an event this build reads (the decider judges the events themselves).
 */
// eslint-disable-next-line max-lines-per-function -- one pass over the file's lines, each check naming the line it refuses; split, the checks would lose the line they report
export function parseAdventureExport(text: string, target: ImportTarget): ParsedImport {
  const lines = text.split('\n');
  // One trailing newline ends the last line; it is not an empty line of its own.
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  const header = parseHeader(lines[0] ?? '');
  const expectedLines = header.events + 1;
  if (lines.length < expectedLines) {
    throw new ImportRefusedError(
      lines.length + 1,
      `the header announces ${header.events} events but the file ends after ${lines.length - 1} (truncated?)`,
    );
  }
  if (lines.length > expectedLines) {
    throw new ImportRefusedError(
      expectedLines + 1,
      `the header announces ${header.events} events but more lines follow`,
    );
  }

  const events: ImportedEvent[] = [];
  const ids = new Set<string>();
  for (let index = 1; index < lines.length; index++) {
    const lineNumber = index + 1;
    const refuse = (problem: string): never => {
      throw new ImportRefusedError(lineNumber, problem);
    };
    const line = lines[index];
    if (line.trim() === '') refuse('the line is empty; one event per line is expected');
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      refuse('not valid JSON (a truncated or corrupted line?)');
    }
    const event = raw as Record<string, unknown>;
    if (!isRecord(event)) refuse('an event must be a JSON object');
    const { type, schemaVersion, data, metadata, id, version } = event;
    if (typeof type !== 'string') refuse('"type" is missing');
    if (!isAdventureEventType(type as string)) {
      refuse(`unknown event type ${JSON.stringify(type)}`);
    }
    if (version !== index) {
      refuse(
        `event version ${JSON.stringify(version)} where ${index} was expected (events out of order, missing or repeated)`,
      );
    }
    if (typeof id !== 'string' || !UUID.test(id)) refuse('"id" must be a uuid');
    if (ids.has((id as string).toLowerCase())) refuse(`event id ${id as string} appears twice`);
    ids.add((id as string).toLowerCase());
    if (!Number.isInteger(schemaVersion)) refuse('"schemaVersion" must be a whole number');
    if (!isRecord(data)) refuse('"data" must be a JSON object');
    if (metadata !== undefined && !isRecord(metadata)) refuse('"metadata" must be a JSON object');

    const renamed =
      target.turnIdOf && typeof (data as { turnId?: unknown }).turnId === 'string'
        ? { ...(data as object), turnId: target.turnIdOf((data as { turnId: string }).turnId) }
        : data;
    const stored =
      type === 'AdventureCreated'
        ? { ...(renamed as object), adventureId: target.adventureId, ownerId: target.ownerId }
        : renamed;
    let current: unknown;
    try {
      current = upcast(type as string, schemaVersion as number, stored);
    } catch (error) {
      refuse(messageOf(error));
    }
    const model = (current as { settings?: { model?: unknown } }).settings?.model;
    if (target.checkModel && typeof model === 'string' && model !== '') {
      try {
        target.checkModel(model);
      } catch (error) {
        refuse(`${type as string}: ${messageOf(error)}`);
      }
    }
    events.push({
      ...({ type, data: current } as AdventureEvent),
      id: id as string,
      metadata: {
        ...(metadata as Record<string, unknown> | undefined),
        importedFrom: {
          adventureId: header.adventureId,
          ...(typeof event.recordedAt === 'string' ? { recordedAt: event.recordedAt } : {}),
        },
        ...(target.actor !== undefined && { importedBy: target.actor }),
      },
    });
  }
  const command: ImportAdventure = {
    type: 'ImportAdventure',
    // The import's own events (the close of a turn in flight) take their ids from it.
    key: deterministicEventId(target.adventureId, 'imported'),
    data: { sourceAdventureId: header.adventureId, events },
  };
  return { header, command };
}

/** A log longer than this is not one the API could have written in a sane time. */
export const MAX_IMPORT_EVENTS = 200_000;

function parseHeader(line: string): ExportHeader {
  const refuse = (problem: string): never => {
    throw new ImportRefusedError(1, problem);
  };
  let header: unknown;
  try {
    header = JSON.parse(line);
  } catch {
    refuse(`the header is not valid JSON; an export starts with {"format":"${EXPORT_FORMAT}",…}`);
  }
  if (!isRecord(header)) return refuse('the header must be a JSON object');
  if (header.format !== EXPORT_FORMAT) {
    refuse(`"format" must be "${EXPORT_FORMAT}", not ${JSON.stringify(header.format)}`);
  }
  if (header.formatVersion !== EXPORT_FORMAT_VERSION) {
    refuse(
      `"formatVersion" ${JSON.stringify(header.formatVersion)} is not one this build reads (${EXPORT_FORMAT_VERSION})`,
    );
  }
  if (typeof header.adventureId !== 'string' || header.adventureId === '') {
    refuse('"adventureId" is missing');
  }
  if (!Number.isInteger(header.events) || (header.events as number) < 1) {
    refuse('"events" must be the number of event lines (at least 1)');
  }
  if ((header.events as number) > MAX_IMPORT_EVENTS) {
    refuse(`"events": an import holds at most ${MAX_IMPORT_EVENTS} events`);
  }
  if (!Number.isInteger(header.projectorVersion)) refuse('"projectorVersion" is missing');
  return header as unknown as ExportHeader;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface ImportedAdventure {
  adventureId: string;
  version: number;
  sourceAdventureId: string;
  events: number;
  /**
   * Set when the export was a room: its members, bans and invites belong to where it came from,
   * so the importer is the host alone (RoomReset); who was dropped, for the report.
   */
  room?: { droppedMembers: string[]; droppedInvites: number; note: string };
}

export const ROOM_RESET_NOTE =
  'the export was a room: its members, bans and invites belong to the installation it came from and were not imported; you are its host alone — invite the players again';

/**
 * Reads `text` completely, then has the handler decide and append the new adventure's log in one
 * statement. A turn that was in flight when the export was taken is closed as failed
 * (decideImport), so the imported adventure is never stuck waiting for a job that exists only
 * where it came from.
 */
export async function importAdventure(
  adventures: AdventureCommandHandler,
  text: string,
  target: ImportTarget & { actor: string },
): Promise<ImportedAdventure> {
  const { header, command } = parseAdventureExport(text, target);
  try {
    const handled = await adventures.handle(target.adventureId, command, { actor: target.actor });
    const reset = handled.events.find((event) => event.type === 'RoomReset');
    return {
      adventureId: target.adventureId,
      version: handled.state.version,
      sourceAdventureId: header.adventureId,
      events: handled.events.length,
      ...(reset?.type === 'RoomReset' && {
        room: {
          droppedMembers: reset.data.droppedMembers,
          droppedInvites: reset.data.droppedInvites,
          note: ROOM_RESET_NOTE,
        },
      }),
    };
  } catch (error) {
    // The decider names the event by its version; the file's line is one more (the header).
    if (error instanceof ImportedEventRefusedError) {
      throw new ImportRefusedError(error.version + 1, error.problem);
    }
    throw error;
  }
}
