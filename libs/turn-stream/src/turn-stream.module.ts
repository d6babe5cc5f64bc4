import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import Redis from 'ioredis';
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
    await this.redis.quit().catch(() => this.redis.disconnect());
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
          useFactory: () => {
            const redis = new Redis(options.redisUrl, {
              maxRetriesPerRequest: 2,
              connectTimeout: 2000,
              enableAutoPipelining: true,
              connectionName: 'chronicle-turn-stream',
            });
            redis.on('error', () => undefined);
            return redis;
          },
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
