import { Injectable } from '@nestjs/common';
import type { AdventureState } from '@chronicle/adventure';
import { MemoryRetrievalService, type RetrievalResult } from '@chronicle/memory-store';

/**
 * The memory bank's seam in a turn: the memories the prompt carries, or null when the bank is
 * off. Never fails a turn: a failed query embedding comes back as the result's error, with the
 * pinned memories still used (libs/memory-store's MemoryRetrievalService). The query's cost comes
 * back as its usage, recorded with the turn.
 */
@Injectable()
export class MemoryRetrieval {
  constructor(private readonly service: MemoryRetrievalService) {}

  retrieve(state: AdventureState): Promise<RetrievalResult | null> {
    return this.service.retrieve(state);
  }
}
