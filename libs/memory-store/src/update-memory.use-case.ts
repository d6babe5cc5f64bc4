// One memory job for one adventure: write the memories due, then the summary, embed what is
// pending, evict over capacity. Each write is decided against the projection again at append
// time and carries a deterministic event id, so a job killed and redelivered, or two jobs racing,
// never write the same memory twice. A cursor moves only with a successful write: a failed model
// call leaves it, and the next run (or BullMQ's retry) does the work again.
import { activeMemories, type AdventureState, type MemoryEvent } from '@chronicle/adventure';
import { deterministicEventId, type AdventureRepository } from '@chronicle/adventure-store';
import type { Embedder, ModelClient } from '@chronicle/llm';
import {
  BACKGROUND_MAX_TOKENS,
  BACKGROUND_TEMPERATURE,
  MAX_EMBED_BATCH,
  MEMORY_EXCERPT_TOKENS,
  STORY_SEPARATOR,
  SUMMARY_MAX_TOKENS,
  castBrief,
  cleanReply,
  evictionOrder,
  lastTokensOf,
  memoryBlocks,
  memoryExcerpt,
  memoryPrompt,
  summaryPlan,
  summaryPrompt,
  type MemoryBlock,
  type SummaryPlan,
} from '@chronicle/memory';
import { textHash, type EmbeddingRepository } from './embedding.repository';

const ACTOR = 'worker:memory';

export interface UpdateMemoryInput {
  adventureId: string;
  jobId?: string;
  attempt?: number;
}

export interface UpdateMemoryOutcome {
  memoriesWritten: number;
  summaryWritten: boolean;
  embedded: number;
  forgotten: number;
  /** Plain messages of the calls that failed; the work they left is redone on the next run. */
  errors: string[];
}

export interface UpdateMemoryOptions {
  /** The model used when an adventure names none. */
  defaultModel: string;
}

export class UpdateMemoryUseCase {
  constructor(
    private readonly adventures: AdventureRepository,
    private readonly model: ModelClient,
    private readonly embedder: Embedder,
    private readonly embeddings: EmbeddingRepository,
    private readonly options: UpdateMemoryOptions,
  ) {}

  async execute(input: UpdateMemoryInput): Promise<UpdateMemoryOutcome> {
    const outcome: UpdateMemoryOutcome = {
      memoriesWritten: 0,
      summaryWritten: false,
      embedded: 0,
      forgotten: 0,
      errors: [],
    };
    const loaded = await this.adventures.load(input.adventureId);
    if (!loaded) return outcome;
    let state: AdventureState = loaded;
    const { autoSummarize, memoryBankEnabled } = state.settings;
    const meta = { actor: ACTOR, jobId: input.jobId, attempt: input.attempt };

    // Memories feed both the bank and the summary, so either setting writes them.
    if (autoSummarize || memoryBankEnabled) {
      for (const block of memoryBlocks(state)) {
        const written: AdventureState | null = await this.writeMemory(
          input.adventureId,
          state,
          block,
          meta,
        ).catch((error: Error) => {
          outcome.errors.push(`memory: ${error.message}`);
          return null;
        });
        if (!written) break;
        state = written;
        outcome.memoriesWritten++;
      }
    }
    if (autoSummarize) {
      const plan = summaryPlan(state);
      if (plan) {
        try {
          const written = await this.writeSummary(input.adventureId, state, plan, meta);
          if (written) {
            state = written;
            outcome.summaryWritten = true;
          }
        } catch (error) {
          outcome.errors.push(`summary: ${(error as Error).message}`);
        }
      }
    }
    if (memoryBankEnabled) {
      try {
        outcome.embedded = await this.embedPending(state);
      } catch (error) {
        outcome.errors.push(`embedding: ${(error as Error).message}`);
      }
      const evicted = await this.evict(input.adventureId, meta);
      outcome.forgotten = evicted;
    }
    return outcome;
  }

  private modelName(state: AdventureState): string {
    return state.settings.model || this.options.defaultModel;
  }

  private async brief(state: AdventureState, texts: string[]): Promise<string> {
    return castBrief({
      persona: state.fields.persona,
      cards: state.cards,
      plotEssentials: state.fields.plotEssentials,
      storyText: texts.join(STORY_SEPARATOR),
      encoding: state.settings.encoding,
    });
  }

  private async writeMemory(
    adventureId: string,
    state: AdventureState,
    block: MemoryBlock,
    meta: Record<string, unknown> & { actor: string },
  ): Promise<AdventureState | null> {
    const texts = await this.adventures.readActionTexts(adventureId, block.entries);
    const prompt = memoryPrompt(
      await this.brief(state, texts),
      memoryExcerpt(texts, state.settings.encoding),
    );
    const result = await this.model.complete({
      ...prompt,
      model: this.modelName(state),
      temperature: BACKGROUND_TEMPERATURE,
      maxTokens: BACKGROUND_MAX_TOKENS,
      purpose: 'memory',
    });
    const text = cleanReply(result.text);
    if (!text) throw new Error('the model returned an empty memory');
    // Named by the block's actions and their text versions: the same block is the same memory;
    // an edited block is a new one.
    const memoryId = deterministicEventId(
      adventureId,
      'memory',
      ...block.entries.map((entry) => `${entry.id}@${entry.textVersion}`),
    );
    const handled = await this.adventures.handleWith(adventureId, meta, (current) => {
      const due = memoryBlocks(current)[0];
      if (
        !due ||
        due.anchorActionId !== block.anchorActionId ||
        due.sourceStart !== block.sourceStart
      ) {
        return { events: [] };
      }
      const event: MemoryEvent = {
        type: 'MemoryWritten',
        data: {
          memoryId,
          text,
          sourceStart: block.sourceStart,
          sourceEnd: block.sourceEnd,
          anchorActionId: block.anchorActionId,
          createdBy: 'worker',
        },
      };
      return {
        events: [event],
        eventIds: [memoryId],
        metadata: { model: result.model, usage: result.usage },
      };
    });
    // Nothing appended means another run wrote it first (or the story moved): stop this pass.
    return handled.events.length > 0 ? handled.state : null;
  }

  private async writeSummary(
    adventureId: string,
    state: AdventureState,
    plan: SummaryPlan,
    meta: Record<string, unknown> & { actor: string },
  ): Promise<AdventureState | null> {
    const texts = await this.adventures.readActionTexts(adventureId, plan.entries);
    const events =
      plan.memories.length > 0
        ? plan.memories.map((memory) => `- ${memory}`).join('\n')
        : lastTokensOf(texts, MEMORY_EXCERPT_TOKENS, state.settings.encoding);
    const prompt = summaryPrompt(await this.brief(state, texts), plan.current?.text ?? '', events);
    const result = await this.model.complete({
      ...prompt,
      model: this.modelName(state),
      temperature: BACKGROUND_TEMPERATURE,
      maxTokens: SUMMARY_MAX_TOKENS,
      purpose: 'summary',
    });
    const text = cleanReply(result.text);
    if (!text) throw new Error('the model returned an empty summary');
    const summaryId = deterministicEventId(
      adventureId,
      'summary',
      plan.anchorActionId,
      String(plan.sourceStart),
      plan.current?.id ?? '',
      plan.current?.text ?? '',
    );
    const handled = await this.adventures.handleWith(adventureId, meta, (current) => {
      const due = summaryPlan(current);
      if (
        !due ||
        due.anchorActionId !== plan.anchorActionId ||
        due.sourceStart !== plan.sourceStart ||
        due.current?.text !== plan.current?.text
      ) {
        return { events: [] };
      }
      const event: MemoryEvent = {
        type: 'SummaryWritten',
        data: {
          summaryId,
          text,
          anchorActionId: plan.anchorActionId,
          sourceStart: plan.sourceStart,
          sourceEnd: plan.sourceEnd,
          handEdited: false,
          replacesSummaryId: null,
        },
      };
      return {
        events: [event],
        eventIds: [summaryId],
        metadata: { model: result.model, usage: result.usage },
      };
    });
    return handled.events.length > 0 ? handled.state : null;
  }

  /** Embeds memories with no vector for the current model, in writing order, 32 per request. */
  private async embedPending(state: AdventureState): Promise<number> {
    const model = this.embedder.model;
    const texts = [
      ...new Map(
        state.memory.memories
          .filter((memory) => !memory.withdrawn)
          .map((memory) => [textHash(memory.text), memory.text] as const),
      ),
    ];
    const stored = await this.embeddings.find(
      model,
      texts.map(([hash]) => hash),
    );
    const pending = texts.filter(([hash]) => !stored.has(hash));
    for (let start = 0; start < pending.length; start += MAX_EMBED_BATCH) {
      const batch = pending.slice(start, start + MAX_EMBED_BATCH);
      const vectors = await this.embedder.embed(batch.map(([, text]) => text));
      await this.embeddings.save(
        model,
        batch.map(([hash], index) => ({ hash, vector: vectors[index] })),
      );
    }
    return pending.length;
  }

  private async evict(
    adventureId: string,
    meta: Record<string, unknown> & { actor: string },
  ): Promise<number> {
    const handled = await this.adventures.handleWith(adventureId, meta, (current) => {
      const ids = evictionOrder(
        activeMemories(current).map((memory) => ({
          id: memory.id,
          pinned: memory.pinned,
          lastUsedAt: memory.lastUsedVersion,
          createdAt: memory.createdAtVersion,
          useCount: memory.useCount,
        })),
        current.settings.memoryCapacity,
      );
      if (ids.length === 0) return { events: [] };
      const eventId = deterministicEventId(adventureId, 'forget', String(current.version), ...ids);
      return {
        events: [{ type: 'MemoryForgotten', data: { memoryIds: ids, reason: 'capacity' } }],
        eventIds: [eventId],
      };
    });
    return handled.events.length > 0
      ? (handled.events[0].data as { memoryIds: string[] }).memoryIds.length
      : 0;
  }
}
