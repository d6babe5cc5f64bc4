import { UsageController } from './usage/usage.controller';
import { UsageLedger } from './usage/usage-ledger.service';
import { type DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { SlowStatementsInterceptor } from './http/slow-statements';
import {
  AppendAnnouncer,
  adventureInfrastructure,
  PLAYED_PROJECTION_CACHE,
} from '@chronicle/adventure-store';
import { MetricsModule } from '@chronicle/metrics';
import { ControlPlaneModule, type AppConfig } from '@chronicle/platform';
import { TurnStreamModule } from '@chronicle/turn-stream';
import { APP_CONFIG } from './app-config.token';
import { AdminController } from './admin/admin.controller';
import { AuthModule } from './auth/auth.module';
import { ReplayModule } from './replay/replay.module';
import { StoryCardLoreUseCase } from './adventures/story-card-lore.use-case';
import { AdventureCommandsUseCase } from './adventures/adventure-commands.use-case';
import { AdventureReader } from './adventures/adventure.reader';
import { AdventuresController } from './adventures/adventures.controller';
import { ContextPreviewUseCase } from './adventures/context-preview.use-case';
import { CreateAdventureUseCase } from './adventures/create-adventure.use-case';
import { FollowTurnUseCase } from './adventures/follow-turn.use-case';
import { SubmitActionUseCase } from './adventures/submit-action.use-case';
import { TurnsController } from './adventures/turns.controller';
import { RoundsController } from './adventures/rounds.controller';
import { RoundsUseCase } from './adventures/rounds.use-case';
import { TurnsUseCase } from './adventures/turns.use-case';
import { StreamSlots } from './adventures/stream-slots';
import { HealthController } from './health/health.controller';
import { ApiMetrics } from './metrics/api-metrics';
import { MetricsController } from './metrics/metrics.controller';
import { MemoriesModule } from './memories/memories.module';
import { WebhookRoutesModule } from './webhooks/webhooks.module';
import { ScriptSandboxModule } from '@chronicle/script-sandbox';
import { ScriptsController } from './scripts/scripts.controller';
import { ScriptsUseCase } from './scripts/scripts.use-case';
import { FollowRoomUseCase } from './adventures/follow-room.use-case';
import { PlayerDailyCap } from './adventures/player-daily-cap';
import { RoomStreamController } from './adventures/room-stream.controller';
import { RoomsController } from './rooms/rooms.controller';
import { RoomsUseCase } from './rooms/rooms.use-case';

@Module({})
export class ApiModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ...adventureInfrastructure(config, PLAYED_PROJECTION_CACHE),
        TurnStreamModule.forRoot({
          redisUrl: config.redisUrl,
          prefix: config.queuePrefix,
          readers: config.turnStreamReaders,
        }),
        ControlPlaneModule.forRoot({
          redisUrl: config.redisUrl,
          installation: config.queuePrefix,
          app: 'api',
        }),
        MemoriesModule.forRoot(config),
        WebhookRoutesModule.forRoot(config),
        AuthModule.forRoot(config),
        ReplayModule.forRoot(config),
        ScriptSandboxModule.forRoot(config),
        MetricsModule.forRoot({ app: 'api' }),
      ],
      controllers: [
        HealthController,
        AdventuresController,
        TurnsController,
        RoomStreamController,
        RoundsController,
        ScriptsController,
        RoomsController,
        AdminController,
        UsageController,
        MetricsController,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: APP_INTERCEPTOR, useClass: SlowStatementsInterceptor },
        AdventureReader,
        CreateAdventureUseCase,
        AdventureCommandsUseCase,
        StoryCardLoreUseCase,
        SubmitActionUseCase,
        RoundsUseCase,
        TurnsUseCase,
        FollowTurnUseCase,
        FollowRoomUseCase,
        PlayerDailyCap,
        AppendAnnouncer,
        StreamSlots,
        ContextPreviewUseCase,
        ScriptsUseCase,
        RoomsUseCase,
        UsageLedger,
        ApiMetrics,
      ],
      exports: [APP_CONFIG],
    };
  }
}
