import { Module } from '@nestjs/common';
import { AdventureHistoryController, ReplayAdminController } from './replay.controller';
import { ReplayUseCase } from './replay.use-case';

// Replay, time travel, export and import. Imported by ApiModule; the event store and
// the adventure repository come from its global modules.
@Module({
  controllers: [ReplayAdminController, AdventureHistoryController],
  providers: [ReplayUseCase],
})
export class ReplayModule {}
