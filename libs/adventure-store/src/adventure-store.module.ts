import { type DynamicModule, Global, Module } from '@nestjs/common';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { AdventureCommandHandler } from './adventure.command-handler';

@Global()
@Module({})
export class AdventureStoreModule {
  static forRoot(options: { snapshotEvery: number; cacheSize?: number }): DynamicModule {
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
