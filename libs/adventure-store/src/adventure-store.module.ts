import { type DynamicModule, Global, Module } from '@nestjs/common';
import {
  EVENT_STORE_DB,
  EventStoreRepository,
  SnapshotRepository,
  type Database,
} from '@chronicle/event-store';
import type { Kysely } from 'kysely';
import {
  AdventureCommandHandler,
  type AdventureCommandHandlerOptions,
} from './adventure.command-handler';
import { TurnsInFlightRepository } from './turns-in-flight.repository';

@Global()
@Module({})
export class AdventureStoreModule {
  static forRoot(options: AdventureCommandHandlerOptions): DynamicModule {
    return {
      module: AdventureStoreModule,
      providers: [
        {
          provide: AdventureCommandHandler,
          useFactory: (events: EventStoreRepository, snapshots: SnapshotRepository) =>
            new AdventureCommandHandler(events, snapshots, options),
          inject: [EventStoreRepository, SnapshotRepository],
        },
        {
          provide: TurnsInFlightRepository,
          useFactory: (db: Kysely<Database>) => new TurnsInFlightRepository(db),
          inject: [EVENT_STORE_DB],
        },
      ],
      exports: [AdventureCommandHandler, TurnsInFlightRepository],
    };
  }
}
