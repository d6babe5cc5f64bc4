import { type DynamicModule, Module } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { AccountsModule, keysEqual } from '@chronicle/accounts';
import {
  AppendAnnouncer,
  adventureInfrastructure,
  PLAYED_PROJECTION_CACHE,
} from '@chronicle/adventure-store';
import { modelConfigsOf } from '@chronicle/llm';
import { MemoryStoreModule } from '@chronicle/memory-store';
import { meteredMemoryCalls, MetricsModule, workerMetricsServer } from '@chronicle/metrics';
import { ControlPlaneModule, modelPriceTable, type AppConfig } from '@chronicle/platform';
import { narrateBackoff, QueueName, queueWorkerModules } from '@chronicle/queue';
import { TurnStreamModule } from '@chronicle/turn-stream';
import { ScriptSandboxModule } from '@chronicle/script-sandbox';
import { TurnScripts } from './turn-scripts';
import type { WorkerOptions } from 'bullmq';
import { modelClientProviders } from './model-client.provider';
import { admissionProviders } from './narrate.admission';
import { NarrateTurnUseCase } from './narrate-turn.use-case';
import { NarrateStages } from './narrate.stages';
import { TurnRecorder } from './turn.recorder';
import { FinishedNarrationStore } from './finished-narration.store';
import { NarrateProcessor } from './narrate.processor';
import { TurnReconciler } from './turn.reconciler';
import { TurnTimerUseCase } from './turn-timer.use-case';
import { WORKER_CONFIG } from './worker-config.token';

/** The narrate worker's BullMQ options, from configuration. */
export function narrateWorkerOptions(config: AppConfig): Partial<WorkerOptions> {
  return {
    // Started at bootstrap, after the start-up checks (see NarrateProcessor).
    autorun: false,
    concurrency: config.narrateConcurrency,
    // A dead worker's turn is taken over after its lock expires and the next stalled check
    // runs: both bounded by NARRATE_LOCK_MS.
    lockDuration: config.narrateLockMs,
    stalledInterval: config.narrateLockMs,
    settings: { backoffStrategy: narrateBackoff },
  };
}

@Module({})
export class ContextWorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    // @Processor's worker options are class metadata; a subclass per configuration carries
    // this process's (two modules booted in one test process keep their own).
    class ConfiguredNarrateProcessor extends NarrateProcessor {}
    Processor(QueueName.Narrate, narrateWorkerOptions(config))(ConfiguredNarrateProcessor);

    return {
      module: ContextWorkerModule,
      imports: [
        ...adventureInfrastructure(config, PLAYED_PROJECTION_CACHE),
        // Each narration's tokens go onto its owner's daily counter, which the API's budget reads.
        AccountsModule.forRoot({ redisUrl: config.redisUrl, prefix: config.queuePrefix }),
        // Retrieval embeds the turn's query with the installation's embedder (offline: no key),
        // counted like the model's calls.
        MemoryStoreModule.forRoot({
          models: modelConfigsOf(config),
          ...meteredMemoryCalls(modelPriceTable(config)),
        }),
        TurnStreamModule.forRoot({ redisUrl: config.redisUrl, prefix: config.queuePrefix }),
        ControlPlaneModule.forRoot({
          redisUrl: config.redisUrl,
          installation: config.queuePrefix,
          app: 'context-worker',
        }),
        ScriptSandboxModule.forRoot(config),
        MetricsModule.forRoot({
          app: 'context-worker',
          server: workerMetricsServer('context-worker', config, keysEqual),
        }),
        ...queueWorkerModules(
          { redisUrl: config.redisUrl, prefix: config.queuePrefix },
          QueueName.Narrate,
        ),
      ],
      providers: [
        { provide: WORKER_CONFIG, useValue: config },
        ...modelClientProviders,
        ...admissionProviders,
        NarrateTurnUseCase,
        NarrateStages,
        TurnRecorder,
        FinishedNarrationStore,
        TurnScripts,
        { provide: NarrateProcessor, useClass: ConfiguredNarrateProcessor },
        TurnReconciler,
        AppendAnnouncer,
        TurnTimerUseCase,
      ],
      exports: [NarrateTurnUseCase, TurnReconciler],
    };
  }
}
