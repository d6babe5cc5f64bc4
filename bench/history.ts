// Puts a generated history into the log as it is, in batches: playing thousands of turns
// through the API would take minutes, and what a benchmark measures is what comes after.
import { randomUUID } from 'node:crypto';
import {
  adventureStreamId,
  EVENT_SCHEMA_VERSIONS,
  initialState,
  projectFrom,
  type DecidedEvent,
  type RecordedAdventureEvent,
} from '@chronicle/adventure';
import { readModelsOf } from '@chronicle/adventure-store';
import type { EventStoreRepository } from '@chronicle/event-store';

const BATCH = 500;

export async function appendHistory(
  store: EventStoreRepository,
  adventureId: string,
  events: readonly Pick<RecordedAdventureEvent, 'type' | 'data'>[],
): Promise<void> {
  // Folded as it goes, for the read models' rows every append writes (owner, turn, usage).
  let state = initialState();
  for (let from = 0; from < events.length; from += BATCH) {
    const batch = events.slice(from, from + BATCH) as DecidedEvent[];
    const readModels = readModelsOf(batch, state);
    state = projectFrom(
      state,
      batch.map((event, i) => ({ ...event, version: from + i + 1 }) as RecordedAdventureEvent),
    );
    await store.appendToStream(
      adventureStreamId(adventureId),
      events.slice(from, from + BATCH).map(({ type, data }) => ({
        id: randomUUID(),
        type,
        schemaVersion: EVENT_SCHEMA_VERSIONS[type],
        data,
        metadata: { actor: 'bench' },
      })),
      { expectedVersion: from === 0 ? 'no_stream' : from, readModels },
    );
  }
}
