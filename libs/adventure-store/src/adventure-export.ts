import { adventureStreamId, NotFoundError, projectorVersion } from '@chronicle/adventure';
import { EventStoreRepository, type StoredEvent } from '@chronicle/event-store';

// An adventure's log as NDJSON: one header line, then one event per line exactly as stored
// (its schema version and data unchanged — the importer upcasts, like every reader). The events
// are read in pages up to the version counted for the header, so a turn appended while the
// export streams neither breaks the count nor half-appears.

export const EXPORT_FORMAT = 'chronicle-adventure';
export const EXPORT_FORMAT_VERSION = 1;
const PAGE = 500;

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  formatVersion: number;
  /** The projector of the exporting build; informative (the events, not the projection, travel). */
  projectorVersion: number;
  adventureId: string;
  exportedAt: string;
  /** How many event lines follow. */
  events: number;
}

export interface ExportedEvent {
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: Record<string, unknown>;
  id: string;
  version: number;
  recordedAt: string;
}

export function exportedEvent(event: StoredEvent): ExportedEvent {
  return {
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: event.data,
    metadata: event.metadata,
    id: event.id,
    version: event.version,
    recordedAt: event.recordedAt.toISOString(),
  };
}

/**
 * The export's lines, each ending in `\n`. Throws NotFoundError before yielding anything when
 * the adventure does not exist, so an HTTP answer can still be a 404.
 */
export async function openAdventureExport(
  eventStore: EventStoreRepository,
  adventureId: string,
  now: Date,
): Promise<{ header: ExportHeader; lines: AsyncGenerator<string> }> {
  const streamId = adventureStreamId(adventureId);
  const count = await eventStore.streamVersion(streamId);
  if (count === 0) throw new NotFoundError(`adventure ${adventureId} not found`);
  const header: ExportHeader = {
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    projectorVersion,
    adventureId,
    exportedAt: now.toISOString(),
    events: count,
  };
  async function* lines(): AsyncGenerator<string> {
    yield `${JSON.stringify(header)}\n`;
    for (let from = 1; from <= count; from += PAGE) {
      const page = await eventStore.readStream(streamId, {
        from,
        to: Math.min(count, from + PAGE - 1),
      });
      let chunk = '';
      for (const event of page) chunk += `${JSON.stringify(exportedEvent(event))}\n`;
      yield chunk;
    }
  }
  return { header, lines: lines() };
}
