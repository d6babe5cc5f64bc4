import type { Kysely } from 'kysely';
import type { Database } from '../../libs/event-store/src/database';
import { EventStoreRepository } from '../../libs/event-store/src/event-store.repository';
import type { NewEvent } from '../../libs/event-store/src/event-store.types';

/**
 * The real event store, where another writer (`other`) appends just before each of the next
 * `interpose` appends: a real version conflict on demand, with nothing mocked.
 */
export class InterposingEventStore extends EventStoreRepository {
  interpose = 0;
  appends = 0;

  constructor(
    db: Kysely<Database>,
    private readonly other: () => Promise<void>,
  ) {
    super(db);
  }

  override async appendToStream(
    streamId: string,
    events: readonly NewEvent[],
    options: Parameters<EventStoreRepository['appendToStream']>[2],
  ) {
    this.appends++;
    if (this.interpose > 0) {
      this.interpose--;
      await this.other();
    }
    return super.appendToStream(streamId, events, options);
  }
}
