// The memory worker's half of verbatim recall: after each narration, every node of the story
// tree not indexed yet goes into story_passages, so the next turn finds the index caught up and
// embeds nothing itself. What the embedding cost is recorded like every model call.
import type { ModelCallUsage } from '@chronicle/adventure';
import type { AdventureCommandHandler } from '@chronicle/adventure-store';
import type { StoryRecallService } from './story-recall.service';

export interface IndexStoryPassagesInput {
  adventureId: string;
  jobId?: string;
  attempt?: number;
}

export class IndexStoryPassagesUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly recall: StoryRecallService,
    /** Counts a call toward the owner's daily budget once it is in the log (absent: not counted). */
    private readonly countSpend?: (ownerId: string, usage: ModelCallUsage) => Promise<void>,
  ) {}

  /** How many passages were indexed; none when the memory bank is off. */
  async execute(input: IndexStoryPassagesInput): Promise<number> {
    const state = await this.adventures.load(input.adventureId);
    if (!state || !state.settings.memoryBankEnabled) return 0;
    const { indexed, usage } = await this.recall.catchUp(state);
    if (usage) {
      const handled = await this.adventures.handle(
        input.adventureId,
        { type: 'RecordModelUsage', data: { purpose: 'embedding', usage } },
        { actor: 'worker:memory', jobId: input.jobId, attempt: input.attempt },
      );
      if (handled.events.length > 0 && state.ownerId && this.countSpend) {
        // The log is the truth; a counter that misses this is rebuilt from it tomorrow.
        await this.countSpend(state.ownerId, usage).catch(() => undefined);
      }
    }
    return indexed;
  }
}
