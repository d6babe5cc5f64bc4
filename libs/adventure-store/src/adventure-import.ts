import {
  adventureStreamId,
  checkRecordedEvent,
  evolveInPlace,
  EVENT_SCHEMA_VERSIONS,
  initialState,
  InvalidCommandError,
  isAdventureEventType,
  projectFrom,
  upcast,
  type AdventureEvent,
  type AdventureState,
  type RecordedAdventureEvent,
} from '@chronicle/adventure';
import { createHash } from 'node:crypto';
import { EventStoreRepository, type NewEvent } from '@chronicle/event-store';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, type ExportHeader } from './adventure-export';

// Reads an export back as a new adventure. The whole file is checked before anything is
// written — each line parsed, each event upcast, held to the same field checks, limits and
// decider preconditions as the live API (checkRecordedEvent) and folded through the projector —
// so a bad file is refused with the line and the field that are wrong, and the store never holds
// half an adventure. The new adventure gets a new id and its importer as owner (both live in
// AdventureCreated), and its turns new ids in its own namespace (`turnIdOf`), so no imported
// value names another adventure's turn stream or job; every other id (actions, events,
// memories) is kept, so the story tree holds. A turn in flight when the export was taken is
// closed here as failed: its job belongs to the other installation (or adventure).

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
}

/** Why an imported turn that was in flight ends as failed. */
export const IMPORTED_IN_FLIGHT_MESSAGE =
  'this turn was still being narrated when the adventure was exported; it was not narrated here — retry it, or act again';

export interface ParsedImport {
  header: ExportHeader;
  /** The events to append, in order. */
  events: NewEvent[];
  /** The projection the new adventure will have. */
  state: AdventureState;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks a whole export and prepares its events for `target`; throws ImportRefusedError. */
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

  const draft = initialState();
  const events: NewEvent[] = [];
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
    if (index === 1 && type !== 'AdventureCreated') {
      refuse(`the first event must be AdventureCreated, not ${type as string}`);
    }
    if (index > 1 && type === 'AdventureCreated') refuse('AdventureCreated may only come first');

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
    try {
      const recorded = { type, data: current } as AdventureEvent;
      checkRecordedEvent(recorded, draft);
      const model = (current as { settings?: { model?: unknown } }).settings?.model;
      if (target.checkModel && typeof model === 'string' && model !== '') {
        target.checkModel(model);
      }
    } catch (error) {
      refuse(`${type as string}: ${messageOf(error)}`);
    }
    try {
      evolveInPlace(draft, { type, data: current, version: index } as RecordedAdventureEvent);
    } catch (error) {
      refuse(`the projector refuses this ${type as string} event: ${messageOf(error)}`);
    }
    events.push({
      id: id as string,
      type: type as string,
      schemaVersion: schemaVersion as number,
      data: stored,
      metadata: {
        ...(metadata as Record<string, unknown> | undefined),
        importedFrom: {
          adventureId: header.adventureId,
          ...(typeof event.recordedAt === 'string' ? { recordedAt: event.recordedAt } : {}),
        },
      },
    });
  }
  // A turn in flight at export time is closed as failed, in the same append: never re-enqueued
  // (its job id belongs to where it came from), and the new adventure takes actions at once.
  if (draft.inFlight) {
    const failed: AdventureEvent = {
      type: 'NarrationFailed',
      // `lost`: its job stayed behind with the installation it came from
      data: {
        turnId: draft.inFlight.turnId,
        code: 'lost',
        message: IMPORTED_IN_FLIGHT_MESSAGE,
        attempts: 0,
      },
    };
    const version = draft.version + 1;
    evolveInPlace(draft, { ...failed, version } as RecordedAdventureEvent);
    events.push({
      id: importedEventId(target.adventureId, draft.version),
      type: failed.type,
      schemaVersion: EVENT_SCHEMA_VERSIONS[failed.type],
      data: failed.data,
      metadata: { importedFrom: { adventureId: header.adventureId }, closedOnImport: true },
    });
  }
  return { header, events, state: projectFrom(draft, []) };
}

/** A log longer than this is not one the API could have written in a sane time. */
export const MAX_IMPORT_EVENTS = 200_000;

function importedEventId(adventureId: string, version: number): string {
  const hex = createHash('sha1').update(`${adventureId}:closed-on-import:${version}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

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
}

/**
 * Validates `text` completely, then writes the new adventure's log in one append. A turn that
 * was in flight when the export was taken is closed as failed (parseAdventureExport), so the
 * imported adventure is never stuck waiting for a job that exists only where it came from.
 */
export async function importAdventure(
  eventStore: EventStoreRepository,
  text: string,
  target: ImportTarget & { actor: string },
): Promise<ImportedAdventure> {
  const parsed = parseAdventureExport(text, target);
  await eventStore.appendToStream(
    adventureStreamId(target.adventureId),
    parsed.events.map((event) => ({
      ...event,
      metadata: { ...event.metadata, importedBy: target.actor },
    })),
    { expectedVersion: 'no_stream' },
  );
  return {
    adventureId: target.adventureId,
    version: parsed.state.version,
    sourceAdventureId: parsed.header.adventureId,
    events: parsed.events.length,
  };
}
