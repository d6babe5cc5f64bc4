import { Injectable, Logger } from '@nestjs/common';
import { AdventureRepository } from '@chronicle/adventure-store';

export type UpdateMemoryOutcome =
  { status: 'skipped'; reason: 'not-found' } | { status: 'done'; version: number };

/**
 * One memory pass over an adventure. For now it only loads the projection: issue 6 writes the
 * memories, summaries and embeddings here, as events, without ever blocking a turn.
 */
@Injectable()
export class UpdateMemoryUseCase {
  private readonly logger = new Logger('UpdateMemory');

  constructor(private readonly adventures: AdventureRepository) {}

  async execute(input: { adventureId: string }): Promise<UpdateMemoryOutcome> {
    const state = await this.adventures.load(input.adventureId);
    if (!state) {
      this.logger.warn({ msg: 'adventure not found; nothing to do' });
      return { status: 'skipped', reason: 'not-found' };
    }
    return { status: 'done', version: state.version };
  }
}
