import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { closeRedis, createCommandConnection } from '@chronicle/platform';
import type { RedisClient } from '@chronicle/platform';
import { TurnStreamPublisher } from './turn-stream';
import { TurnStreamHub } from './turn-stream.hub';

/** The Redis client behind the turn streams; SSE followers share TurnStreamHub's readers. */
export const TURN_STREAM_REDIS = Symbol('TURN_STREAM_REDIS');
export const TURN_STREAM_PREFIX = Symbol('TURN_STREAM_PREFIX');

@Injectable()
class TurnStreamCloser implements OnApplicationShutdown {
  constructor(
    @Inject(TURN_STREAM_REDIS) private readonly redis: RedisClient,
    private readonly hub: TurnStreamHub,
  ) {}
  async onApplicationShutdown(): Promise<void> {
    this.hub.close();
    await closeRedis(this.redis);
  }
}

@Global()
@Module({})
export class TurnStreamModule {
  static forRoot(options: {
    redisUrl: string;
    prefix: string;
    /** Subscriber connections the followers share (TURN_STREAM_READERS; default 2). */
    readers?: number;
  }): DynamicModule {
    return {
      module: TurnStreamModule,
      providers: [
        {
          provide: TURN_STREAM_REDIS,
          useFactory: () => createCommandConnection(options.redisUrl, 'chronicle-turn-stream'),
        },
        { provide: TURN_STREAM_PREFIX, useValue: options.prefix },
        {
          provide: TurnStreamPublisher,
          useFactory: (redis: RedisClient) => new TurnStreamPublisher(redis, options.prefix),
          inject: [TURN_STREAM_REDIS],
        },
        {
          provide: TurnStreamHub,
          useFactory: (redis: RedisClient) =>
            new TurnStreamHub(redis, options.prefix, options.readers),
          inject: [TURN_STREAM_REDIS],
        },
        TurnStreamCloser,
      ],
      exports: [TURN_STREAM_REDIS, TURN_STREAM_PREFIX, TurnStreamPublisher, TurnStreamHub],
    };
  }
}
