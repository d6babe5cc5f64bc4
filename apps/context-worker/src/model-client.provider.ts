import { Logger, type Provider } from '@nestjs/common';
import type { Narrator } from '@chronicle/adventure';
import {
  createModelClient,
  isOfflineConfig,
  modelConfigOf,
  scrubSecret,
  type ModelClient,
} from '@chronicle/llm';
import { ChronicleMetrics, MeteredModelClient } from '@chronicle/metrics';
import { modelPriceTable, type AppConfig } from '@chronicle/platform';
import type { ProviderLimiter } from '@chronicle/queue';
import { PROVIDER_LIMITER, providerLimitedClient } from './narrate.admission';
import { WORKER_CONFIG } from './worker-config.token';

export const MODEL_CLIENT = Symbol('MODEL_CLIENT');

/** Which narrator answers this process's turns: the label a Narrated event carries. */
export class NarratorLabel {
  constructor(readonly narrator: Narrator) {}
}

export const modelClientProviders: Provider[] = [
  {
    provide: MODEL_CLIENT,
    inject: [WORKER_CONFIG, PROVIDER_LIMITER, ChronicleMetrics],
    useFactory: (
      config: AppConfig,
      limiter: ProviderLimiter | null,
      metrics: ChronicleMetrics,
    ): ModelClient => {
      const offline = isOfflineConfig({ apiKey: config.modelApiKey });
      // Once, at start-up, so an operator sees which narrator is live; the key never appears.
      new Logger('ModelClient').log(
        offline
          ? { msg: 'narrator: offline (no MODEL_API_KEY set)', narrator: 'offline' }
          : {
              msg: 'narrator: remote',
              narrator: 'remote',
              baseURL: scrubSecret(config.modelBaseUrl, config.modelApiKey),
              defaultModel: config.modelName,
            },
      );
      // Every narration's usage and 429s reach the provider key's limiter, shared by all workers;
      // counted once here, for every caller: durations, errors by code, tokens and cost.
      return new MeteredModelClient(
        providerLimitedClient(createModelClient(modelConfigOf(config)), limiter),
        metrics,
        modelPriceTable(config),
      );
    },
  },
  {
    provide: NarratorLabel,
    inject: [WORKER_CONFIG],
    useFactory: (config: AppConfig) =>
      new NarratorLabel(isOfflineConfig({ apiKey: config.modelApiKey }) ? 'offline' : 'remote'),
  },
];
