import { type DynamicModule, Module } from '@nestjs/common';
import { modelConfigOf } from '@chronicle/llm';
import { MemoryStoreModule } from '@chronicle/memory-store';
import type { AppConfig } from '@chronicle/platform';
import { MemoriesController } from './memories.controller';
import { MemoriesUseCase } from './memories.use-case';

/** The memory bank's and the summary's routes; needs the event and adventure stores. */
@Module({})
export class MemoriesModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: MemoriesModule,
      imports: [MemoryStoreModule.forRoot({ model: modelConfigOf(config) })],
      controllers: [MemoriesController],
      providers: [MemoriesUseCase],
    };
  }
}
