import { Injectable } from '@nestjs/common';
import type { AdventureState } from '@chronicle/adventure';
import type { RetrievedMemories } from '@chronicle/context';

/**
 * The memory bank's seam in a turn: the memories the prompt carries, or null when the bank is
 * off. Issue 6 fills it in (embed the query, rank, report an error instead of failing the turn);
 * until then no turn retrieves anything.
 */
@Injectable()
export class MemoryRetrieval {
  async retrieve(_state: AdventureState): Promise<RetrievedMemories | null> {
    return null;
  }
}
