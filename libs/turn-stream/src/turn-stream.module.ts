import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { closeRedis, createCommandConnection } from '@chronicle/platform';
import type Redis from 'ioredis';
import { BlockingReaderPool, TurnStreamPublisher } from './turn-stream';

/** The Redis client behind the turn streams; SSE followers' blocking reads use BlockingReaderPool. */
export const TURN_STREAM_REDIS = Symbol('TURN_STREAM_REDIS');
export const TURN_STREAM_PREFIX = Symbol('TURN_STREAM_PREFIX');

@Injectable()
class TurnStreamCloser implements OnApplicationShutdown {
  constructor(
    @Inject(TURN_STREAM_REDIS) private readonly redis: Redis,
    private readonly readers: BlockingReaderPool,
  ) {}
  async onApplicationShutdown(): Promise<void> {
    this.readers.close();
    await closeRedis(this.redis);
  }
}

@Global()
@Module({})
export class TurnStreamModule {
  static forRoot(options: { redisUrl: string; prefix: string }): DynamicModule {
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
          useFactory: (redis: Redis) => new TurnStreamPublisher(redis, options.prefix),
          inject: [TURN_STREAM_REDIS],
        },
        {
          provide: BlockingReaderPool,
          useFactory: (redis: Redis) => new BlockingReaderPool(redis),
          inject: [TURN_STREAM_REDIS],
        },
        TurnStreamCloser,
      ],
      exports: [TURN_STREAM_REDIS, TURN_STREAM_PREFIX, TurnStreamPublisher, BlockingReaderPool],
    };
  }
}
