import { type DynamicModule, Global, Module } from '@nestjs/common';
import { EventStoreRepository, SnapshotRepository } from '@chronicle/event-store';
import { AdventureRepository } from './adventure.repository';

@Global()
@Module({})
export class AdventureStoreModule {
  static forRoot(options: { snapshotEvery: number; cacheSize?: number }): DynamicModule {
    return {
      module: AdventureStoreModule,
      providers: [
        {
          provide: AdventureRepository,
          useFactory: (events: EventStoreRepository, snapshots: SnapshotRepository) =>
            new AdventureRepository(events, snapshots, options),
          inject: [EventStoreRepository, SnapshotRepository],
        },
      ],
      exports: [AdventureRepository],
    };
  }
}
