import { type DynamicModule, Module } from '@nestjs/common';
import { modelConfigsOf } from '@chronicle/llm';
import { MemoryStoreModule } from '@chronicle/memory-store';
import { meteredMemoryCalls } from '@chronicle/metrics';
import { modelPriceTable, type AppConfig } from '@chronicle/platform';
import { MemoriesController } from './memories.controller';
import { MemoriesUseCase } from './memories.use-case';

/** The memory bank's and the summary's routes; needs the event and adventure stores. */
@Module({})
export class MemoriesModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: MemoriesModule,
      imports: [
        // a context preview embeds the story's tail: counted like the workers' calls
        MemoryStoreModule.forRoot({
          models: modelConfigsOf(config),
          ...meteredMemoryCalls(modelPriceTable(config)),
        }),
      ],
      controllers: [MemoriesController],
      providers: [MemoriesUseCase],
    };
  }
}
