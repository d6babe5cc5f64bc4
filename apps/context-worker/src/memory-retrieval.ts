import { Injectable } from '@nestjs/common';
import type { AdventureState } from '@chronicle/adventure';
import type { RetrievedMemories } from '@chronicle/context';
import { MemoryRetrievalService } from '@chronicle/memory-store';

/**
 * The memory bank's seam in a turn: the memories the prompt carries, or null when the bank is
 * off. Never fails a turn: a failed query embedding comes back as the result's error, with the
 * pinned memories still used (libs/memory-store's MemoryRetrievalService).
 */
@Injectable()
export class MemoryRetrieval {
  constructor(private readonly service: MemoryRetrievalService) {}

  retrieve(state: AdventureState): Promise<RetrievedMemories | null> {
    return this.service.retrieve(state);
  }
}
