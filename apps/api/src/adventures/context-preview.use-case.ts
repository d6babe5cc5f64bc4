import { Inject, Injectable } from '@nestjs/common';
import {
  AdventureCommandHandler,
  buildTurnContext,
  contextManifest,
} from '@chronicle/adventure-store';
import { MemoryRetrievalService } from '@chronicle/memory-store';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';

/**
 * The context the next turn would send, built by the same function the context worker runs
 * (libs/adventure-store's `buildTurnContext`), without calling a model or appending anything.
 */
@Injectable()
export class ContextPreviewUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly memories: MemoryRetrievalService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async preview(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    // The same retrieval as a turn's; only a real turn records which memories it used.
    const built = await buildTurnContext(this.adventures, state, {
      defaultModel: this.config.modelName,
      memories: await this.memories.retrieve(state),
    });
    return {
      version: state.version,
      system: built.system,
      story: built.story,
      report: built.report,
      manifest: contextManifest(built),
    };
  }
}
