import { type DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';
import { AdventureHistoryController, ReplayAdminController } from './replay.controller';
import { ReplayUseCase } from './replay.use-case';

// Replay, time travel, export and import. Imported by ApiModule; the event store and the
// adventure command handler come from its global modules, the configuration (the models an
// import may name) from forRoot.
@Module({})
export class ReplayModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ReplayModule,
      controllers: [ReplayAdminController, AdventureHistoryController],
      providers: [{ provide: APP_CONFIG, useValue: config }, ReplayUseCase],
    };
  }
}
