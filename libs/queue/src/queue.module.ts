// Nest wiring for producers: one QueueProducer per process, closed on shutdown.
// Workers build their own bullmq Worker with `workerConnectionOptions()` and
// the same prefix, read from QUEUE_CONFIG.
import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { QueueProducer, type QueueConfig } from './queue.producer';

export const QUEUE_CONFIG = Symbol('QUEUE_CONFIG');

export interface QueueModuleAsyncOptions {
  imports?: DynamicModule['imports'];
  inject?: unknown[];
  useFactory: (...args: never[]) => QueueConfig | Promise<QueueConfig>;
}

@Injectable()
class QueueProducerCloser implements OnApplicationShutdown {
  constructor(@Inject(QueueProducer) private readonly producer: QueueProducer) {}

  async onApplicationShutdown(): Promise<void> {
    await this.producer.close();
  }
}

@Global()
@Module({})
export class QueueModule {
  static forRoot(config: QueueConfig): DynamicModule {
    return QueueModule.forRootAsync({ useFactory: () => config });
  }

  static forRootAsync(options: QueueModuleAsyncOptions): DynamicModule {
    return {
      module: QueueModule,
      imports: options.imports ?? [],
      providers: [
        {
          provide: QUEUE_CONFIG,
          useFactory: options.useFactory,
          inject: (options.inject ?? []) as never[],
        },
        {
          provide: QueueProducer,
          useFactory: (config: QueueConfig) => new QueueProducer(config),
          inject: [QUEUE_CONFIG],
        },
        QueueProducerCloser,
      ],
      exports: [QUEUE_CONFIG, QueueProducer],
    };
  }
}
