import { type DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '@chronicle/platform';
import { WebhooksModule as WebhooksStoreModule } from '@chronicle/webhooks';
import { WebhooksController } from './webhooks.controller';
import { WebhooksUseCase } from './webhooks.use-case';

/** An owner's webhook routes; the deliveries are the memory worker's. */
@Module({})
export class WebhookRoutesModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WebhookRoutesModule,
      imports: [WebhooksStoreModule.forRoot(config)],
      controllers: [WebhooksController],
      providers: [WebhooksUseCase],
    };
  }
}
