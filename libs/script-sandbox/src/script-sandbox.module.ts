import {
  type DynamicModule,
  Global,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { AppConfig } from '@chronicle/platform';
import type { ScriptRunLimits } from '@chronicle/scripting';
import { ScriptSandboxPool } from './sandbox.pool';

/** The operator's script limits, as the hook chain takes them (an adventure may ask for less). */
export type { ScriptRunLimits };
export const SCRIPT_RUN_LIMITS = Symbol('SCRIPT_RUN_LIMITS');

@Injectable()
class SandboxCloser implements OnApplicationShutdown {
  constructor(private readonly pool: ScriptSandboxPool) {}
  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }
}

/** One sandbox pool per process (the API's, each context worker's), closed at shutdown. */
@Global()
@Module({})
export class ScriptSandboxModule {
  static forRoot(
    config: Pick<
      AppConfig,
      | 'scriptSandboxProcesses'
      | 'scriptHookTimeoutMs'
      | 'scriptTurnBudgetMs'
      | 'scriptMemoryLimitMb'
    >,
  ): DynamicModule {
    return {
      module: ScriptSandboxModule,
      providers: [
        {
          provide: ScriptSandboxPool,
          useFactory: () => new ScriptSandboxPool({ processes: config.scriptSandboxProcesses }),
        },
        {
          provide: SCRIPT_RUN_LIMITS,
          useValue: {
            hookTimeoutMs: config.scriptHookTimeoutMs,
            turnBudgetMs: config.scriptTurnBudgetMs,
            memoryLimitMb: config.scriptMemoryLimitMb,
          } satisfies ScriptRunLimits,
        },
        SandboxCloser,
      ],
      exports: [ScriptSandboxPool, SCRIPT_RUN_LIMITS],
    };
  }
}
