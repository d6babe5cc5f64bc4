// Nest wiring of webhooks for the API (registrations) and the memory worker (deliveries); needs
// EventStoreModule (global) for the database and QueueModule (global) for the producer.
import { type DynamicModule, Global, Module } from '@nestjs/common';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import { QueueProducer } from '@chronicle/queue';
import type { Kysely } from 'kysely';
import { WebhookDeliveries, type WebhookDeliveryOptions } from './webhook-deliveries';
import { WebhooksRepository } from './webhooks.repository';

export const WEBHOOK_OPTIONS = Symbol('WEBHOOK_OPTIONS');

/** The settings webhooks read (a subset of @chronicle/platform's AppConfig). */
export interface WebhooksConfig {
  webhooksSecretKey: string | undefined;
  webhooksAllowPrivateAddresses: boolean;
  webhooksTimeoutMs: number;
}

export function webhookOptionsOf(config: WebhooksConfig): WebhookDeliveryOptions {
  return {
    secretKey: config.webhooksSecretKey,
    allowPrivate: config.webhooksAllowPrivateAddresses,
    timeoutMs: config.webhooksTimeoutMs,
  };
}

@Global()
@Module({})
export class WebhooksModule {
  static forRoot(config: WebhooksConfig): DynamicModule {
    return {
      module: WebhooksModule,
      providers: [
        { provide: WEBHOOK_OPTIONS, useValue: webhookOptionsOf(config) },
        {
          provide: WebhooksRepository,
          useFactory: (db: Kysely<Database>) => new WebhooksRepository(db),
          inject: [EVENT_STORE_DB],
        },
        {
          provide: WebhookDeliveries,
          useFactory: (
            repository: WebhooksRepository,
            producer: QueueProducer,
            options: WebhookDeliveryOptions,
          ) => new WebhookDeliveries(repository, producer, options),
          inject: [WebhooksRepository, QueueProducer, WEBHOOK_OPTIONS],
        },
      ],
      exports: [WEBHOOK_OPTIONS, WebhooksRepository, WebhookDeliveries],
    };
  }
}
