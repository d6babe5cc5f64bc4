import {
  adventureStreamId,
  evolveInPlace,
  initialState,
  InvalidCommandError,
  isAdventureEventType,
  projectFrom,
  upcast,
  type AdventureCreatedData,
  type AdventureState,
  type RecordedAdventureEvent,
} from '@chronicle/adventure';
import { EventStoreRepository, type NewEvent, type OutboxJob } from '@chronicle/event-store';
import { JobName, outboxRow } from '@chronicle/queue';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, type ExportHeader } from './adventure-export';

// Reads an export back as a new adventure. The whole file is checked before anything is
// written — each line parsed, each event upcast and folded through the projector — so a bad
// file is refused with the line that is wrong and the store never holds half an adventure.
// The new adventure gets a new id and its importer as owner (both live in AdventureCreated);
// every other id (actions, turns, events, memories) is kept, so the story tree holds. The log
// is written in one append, as it was stored: schema versions and data unchanged apart from
// those two fields.

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
}

export interface ParsedImport {
  header: ExportHeader;
  /** The events to append, in order. */
  events: NewEvent[];
  /** The projection the new adventure will have. */
  state: AdventureState;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks a whole export and prepares its events for `target`; throws ImportRefusedError. */
// eslint-disable-next-line max-lines-per-function -- one pass over the lines, refusing at the first bad one with its line number; split, each part would need the running state
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

    const stored =
      type === 'AdventureCreated'
        ? { ...(data as object), adventureId: target.adventureId, ownerId: target.ownerId }
        : data;
    let current: unknown;
    try {
      current = upcast(type as string, schemaVersion as number, stored);
    } catch (error) {
      refuse(messageOf(error));
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
  return { header, events, state: projectFrom(draft, []) };
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
 * was in flight when the export was taken is narrated again here (its job goes through the
 * outbox with the append), so the imported adventure is never stuck waiting for a job that
 * exists only in the old installation.
 */
export async function importAdventure(
  eventStore: EventStoreRepository,
  text: string,
  target: ImportTarget & { actor: string },
): Promise<ImportedAdventure> {
  const parsed = parseAdventureExport(text, target);
  const created = parsed.events[0].data as AdventureCreatedData;
  const inFlight = parsed.state.inFlight;
  const outbox: OutboxJob[] = inFlight
    ? [
        outboxRow({
          jobName: JobName.NarrateTurn,
          payload: { adventureId: created.adventureId, turnId: inFlight.turnId },
        }),
      ]
    : [];
  await eventStore.appendToStream(
    adventureStreamId(target.adventureId),
    parsed.events.map((event) => ({
      ...event,
      metadata: { ...event.metadata, importedBy: target.actor },
    })),
    { expectedVersion: 'no_stream', outbox },
  );
  return {
    adventureId: target.adventureId,
    version: parsed.state.version,
    sourceAdventureId: parsed.header.adventureId,
    events: parsed.events.length,
  };
}
