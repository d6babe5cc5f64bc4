import { BadGatewayException, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  currentSummary,
  findMemory,
  isMemoryOnPath,
  memoriesOnPath,
  memorySourcesOnPath,
  NotFoundError,
  type AdventureState,
  type MemoryCommand,
  type MemoryRecord,
} from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { SummarizerError, UpdateMemoryUseCase } from '@chronicle/memory-store';
import { requestMetadata } from '../http/request-actor';

export interface MemoryView {
  id: string;
  text: string;
  pinned: boolean;
  /** Forgotten by the player: kept, never retrieved. */
  forgotten: boolean;
  useCount: number;
  createdBy: MemoryRecord['createdBy'];
  /** Depths of the story actions it was written from; null for a hand-written memory. */
  sourceStart: number | null;
  sourceEnd: number | null;
  anchorActionId: string;
  /** The story actions it was written from (expand them with GET …/memories/:memoryId/sources). */
  sourceActionIds: string[];
}

function memoryView(memory: MemoryRecord): MemoryView {
  return {
    id: memory.id,
    text: memory.text,
    pinned: memory.pinned,
    forgotten: memory.forgotten,
    useCount: memory.useCount,
    createdBy: memory.createdBy,
    sourceStart: memory.sourceStart,
    sourceEnd: memory.sourceEnd,
    anchorActionId: memory.anchorActionId,
    sourceActionIds: memory.sourceActionIds,
  };
}

function summaryView(state: AdventureState) {
  const current = currentSummary(state);
  return {
    summary: current
      ? {
          id: current.id,
          text: current.text,
          anchorActionId: current.anchorActionId,
          handEdited: current.handEdited,
        }
      : null,
    version: state.version,
  };
}

/**
 * The player's side of the memory bank and the summary: each command is decided against the
 * head (`decideMemory`) and appended at the expected version. Regenerating the summary calls
 * the summarizer in this request, so the player sees the result (or why it failed) at once.
 */
@Injectable()
export class MemoriesUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly updateMemory: UpdateMemoryUseCase,
  ) {}

  async list(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    return { memories: memoriesOnPath(state).map(memoryView), version: state.version };
  }

  /**
   * A memory expanded to the story's text of its source actions on the current path. Only a
   * memory valid on this path is expanded: one undone, switched away from or made stale by an
   * edit is answered 404, like a memory that does not exist, so nothing of another branch is
   * shown.
   */
  async sources(adventureId: string, memoryId: string) {
    const state = await this.adventures.get(adventureId);
    const memory = findMemory(state, memoryId);
    if (!memory) throw new NotFoundError(`memory ${memoryId} not found in this adventure`);
    if (!isMemoryOnPath(state, memory)) {
      throw new NotFoundError(
        `memory ${memoryId} is not on the current path (undone, on another branch, or its story was edited); list the path's memories with GET …/memories`,
      );
    }
    const entries = memorySourcesOnPath(state, memory);
    const texts = await this.adventures.readActionTexts(adventureId, entries);
    return {
      memoryId,
      text: memory.text,
      sources: entries.map((entry, index) => ({
        actionId: entry.id,
        depth: entry.depth,
        type: entry.type,
        text: texts[index],
      })),
      version: state.version,
    };
  }

  async add(adventureId: string, text: string, id?: string) {
    const memoryId = id ?? randomUUID();
    const before = await this.adventures.get(adventureId);
    const existing = findMemory(before, memoryId);
    // The same client id again: the memory it added is the answer.
    if (existing) return { memory: this.view(before, memoryId), version: before.version };
    const state = await this.run(adventureId, { type: 'AddMemory', data: { memoryId, text } });
    return { memory: this.view(state, memoryId), version: state.version };
  }

  async edit(adventureId: string, memoryId: string, text: string) {
    const state = await this.run(adventureId, { type: 'EditMemory', data: { memoryId, text } });
    return { memory: this.view(state, memoryId), version: state.version };
  }

  async pin(adventureId: string, memoryId: string, pinned: boolean) {
    const state = await this.run(adventureId, {
      type: pinned ? 'PinMemory' : 'UnpinMemory',
      data: { memoryId },
    });
    return { memory: this.view(state, memoryId), version: state.version };
  }

  async forget(adventureId: string, memoryId: string) {
    const state = await this.run(adventureId, { type: 'ForgetMemory', data: { memoryId } });
    return { memory: this.view(state, memoryId), version: state.version };
  }

  async remove(adventureId: string, memoryId: string) {
    const state = await this.run(adventureId, { type: 'DeleteMemory', data: { memoryId } });
    return { memoryId, version: state.version };
  }

  async summary(adventureId: string) {
    return summaryView(await this.adventures.get(adventureId));
  }

  async editSummary(adventureId: string, text: string) {
    const state = await this.run(adventureId, {
      type: 'EditSummary',
      data: { summaryId: randomUUID(), text },
    });
    return summaryView(state);
  }

  async regenerateSummary(adventureId: string) {
    try {
      await this.updateMemory.regenerateSummary(adventureId, requestMetadata());
    } catch (error) {
      if (error instanceof SummarizerError) {
        throw new BadGatewayException(
          `${error.message}. The summary was not changed; try again later or edit it yourself.`,
        );
      }
      throw error;
    }
    return summaryView(await this.adventures.get(adventureId));
  }

  private view(state: AdventureState, memoryId: string): MemoryView & { onPath: boolean } {
    const memory = findMemory(state, memoryId);
    if (!memory) throw new NotFoundError(`memory ${memoryId} not found in this adventure`);
    return { ...memoryView(memory), onPath: isMemoryOnPath(state, memory) };
  }

  private async run(adventureId: string, command: MemoryCommand): Promise<AdventureState> {
    // A new or changed text needs a vector before retrieval can rank it: `jobsAfter` follows
    // it with a memory pass (coalesced with any other pass of this adventure).
    return (await this.adventures.handle(adventureId, command, requestMetadata())).state;
  }
}
