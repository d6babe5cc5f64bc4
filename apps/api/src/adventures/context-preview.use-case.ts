import { Inject, Injectable } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import type { AdventureState, ModelCallUsage } from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  buildTurnContext,
  contextManifest,
} from '@chronicle/adventure-store';
import { MemoryRetrievalService } from '@chronicle/memory-store';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';
import { requestMetadata } from '../http/request-actor';

/**
 * The context the next turn would send, built by the same function the context worker runs
 * (libs/adventure-store's `buildTurnContext`), without calling the narrator. Retrieval embeds
 * the story's tail with the real embedder, so that call is paid for like a turn's: recorded as
 * ModelUsageRecorded and counted toward the daily budget (the route is held to the turn limit).
 */
@Injectable()
export class ContextPreviewUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly memories: MemoryRetrievalService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly budget: DailyTokenBudget,
  ) {}

  async preview(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    // The same retrieval as a turn's; only a real turn records which memories it used.
    const memories = await this.memories.retrieve(state);
    if (memories?.usage) await this.recordUsage(state, memories.usage);
    const built = await buildTurnContext(this.adventures, state, {
      defaultModel: this.config.modelName,
      memories,
    });
    return {
      version: state.version,
      system: built.system,
      story: built.story,
      report: built.report,
      manifest: contextManifest(built),
    };
  }

  private async recordUsage(state: AdventureState, usage: ModelCallUsage): Promise<void> {
    if (state.id === null) return;
    const handled = await this.adventures.handle(
      state.id,
      { type: 'RecordModelUsage', data: { purpose: 'retrieval', usage } },
      requestMetadata(),
    );
    if (handled.events.length > 0 && state.ownerId) {
      await this.budget.recordSpend(state.ownerId, usage, new Date()).catch(() => undefined);
    }
  }
}
