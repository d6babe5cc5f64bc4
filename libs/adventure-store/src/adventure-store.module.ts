import { type DynamicModule, Global, Module } from '@nestjs/common';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import {
  AdventureCommandHandler,
  type AdventureCommandHandlerOptions,
} from './adventure.command-handler';

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
      ],
      exports: [AdventureCommandHandler],
    };
  }
}
