// Kept whole past 400 lines (eslint's max-lines, which skips comments, counts fewer): a memory
// pass's steps and the player's regenerate share the summary prompt, the usage record and the
// spend count; split, those helpers would need a third home only these two use.
// One memory job for one adventure: write the memories due, then the chapters due and the fold
// of the oldest into the summary, embed what is pending; nothing is evicted (the bank keeps every memory). What the model wrote is sent as a
// command (`WriteMemory`, `WriteSummary`: see libs/memory's decider), decided against the head at append
// time with a deterministic key, so a job killed and redelivered, or two jobs racing,
// never write the same memory twice. A cursor moves only with a successful write: a failed model
// call leaves it, and the next run (or BullMQ's retry) does the work again.
import { randomUUID } from 'node:crypto';
import {
  memoriesOnPath,
  type AdventureState,
  type ModelCallPurpose,
  type ModelCallUsage,
} from '@chronicle/adventure';
import {
  deterministicEventId,
  historyBudgetFloor,
  type AdventureCommandHandler,
  type CommandMetadata,
} from '@chronicle/adventure-store';
import { isModelError, type Embedder, type ModelClient } from '@chronicle/llm';
import {
  BACKGROUND_MAX_TOKENS,
  BACKGROUND_TEMPERATURE,
  MAX_EMBED_BATCH,
  MEMORY_EXCERPT_TOKENS,
  STORY_SEPARATOR,
  SUMMARY_MAX_TOKENS,
  castBrief,
  chunkByTokens,
  cleanReply,
  memoryBlocks,
  memoryExcerpt,
  memoryPrompt,
  storyEntries,
  summaryPrompt,
  chapterSpans,
  foldPlan,
  type ChapterSpan,
  type FoldPlan,
  type MemoryBlock,
} from '@chronicle/memory';
import { chapterWork, foldWork, type SummaryWork } from './chapter.work';
import { textHash, type EmbeddingRepository } from './embedding.repository';
import { sumUsage, usageOf } from './model-usage';

const ACTOR = 'worker:memory';

export interface UpdateMemoryInput {
  adventureId: string;
  jobId?: string;
  attempt?: number;
}

export interface UpdateMemoryOutcome {
  memoriesWritten: number;
  chaptersWritten: number;
  summaryWritten: boolean;
  embedded: number;
  /** Plain messages of the calls that failed; the work they left is redone on the next run. */
  errors: string[];
}

export interface UpdateMemoryOptions {
  /** The model used when an adventure names none. */
  defaultModel: string;
  /**
   * The models the operator named for memories and for summaries (MEMORY_MODEL_NAME,
   * SUMMARY_MODEL_NAME): each used for every adventure, over the adventure's own.
   */
  jobModels?: { memory?: string; summary?: string };
  /**
   * Counts a call's tokens toward the adventure owner's daily budget, after its usage is in the
   * log (the accounts lib's DailyTokenBudget.recordSpend; absent: nothing is counted).
   */
  countSpend?: (ownerId: string, usage: ModelCallUsage) => Promise<void>;
}

/** How many chunks of story (of MEMORY_EXCERPT_TOKENS each) a regeneration reads, newest kept. */
export const REGENERATE_MAX_CHUNKS = 6;

/** The summarizer could not write a summary: the model failed or replied with nothing. */
export class SummarizerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SummarizerError';
  }
}

export interface RegeneratedSummary {
  summaryId: string;
  text: string;
  version: number;
}

export class UpdateMemoryUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    /** Memories and summaries may each have their own endpoint (libs/llm's `modelConfigOf`). */
    private readonly models: { memory: ModelClient; summary: ModelClient },
    private readonly embedder: Embedder,
    private readonly embeddings: EmbeddingRepository,
    private readonly options: UpdateMemoryOptions,
  ) {}

  async execute(input: UpdateMemoryInput): Promise<UpdateMemoryOutcome> {
    const outcome: UpdateMemoryOutcome = {
      memoriesWritten: 0,
      chaptersWritten: 0,
      summaryWritten: false,
      embedded: 0,
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
      // The chaptered summary: chapters from the story's own text, then the oldest folded into
      // the short summary once they no longer fit beside the newer ones.
      try {
        for (const span of chapterSpans(state, { historyBudget: historyBudgetFloor(state) })) {
          const written = await this.writeChapter(input.adventureId, state, span, meta);
          if (!written) break;
          state = written;
          outcome.chaptersWritten++;
        }
        const fold = foldPlan(state);
        if (fold) {
          const written = await this.foldChapters(input.adventureId, state, fold, meta);
          if (written) {
            state = written;
            outcome.summaryWritten = true;
          }
        }
      } catch (error) {
        outcome.errors.push(`summary: ${(error as Error).message}`);
      }
    }
    if (memoryBankEnabled) {
      try {
        outcome.embedded = await this.embedPending(input.adventureId, state, meta);
      } catch (error) {
        outcome.errors.push(`embedding: ${(error as Error).message}`);
      }
    }
    return outcome;
  }

  private modelName(state: AdventureState, job: 'memory' | 'summary'): string {
    return this.options.jobModels?.[job] ?? (state.settings.model || this.options.defaultModel);
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
    const result = await this.models.memory.complete({
      ...prompt,
      model: this.modelName(state, 'memory'),
      cacheKey: state.id ?? undefined,
      temperature: BACKGROUND_TEMPERATURE,
      maxTokens: BACKGROUND_MAX_TOKENS,
      purpose: 'memory',
    });
    const usage = usageOf(result);
    const text = cleanReply(result.text);
    if (!text) {
      await this.recordUsage(adventureId, state, 'memory', usage, meta);
      throw new Error('the model returned an empty memory');
    }
    // Named by the block's actions and their text versions: the same block is the same memory;
    // an edited block is a new one.
    const memoryId = deterministicEventId(
      adventureId,
      'memory',
      ...block.entries.map((entry) => `${entry.id}@${entry.textVersion}`),
    );
    const handled = await this.adventures.handle(
      adventureId,
      {
        type: 'WriteMemory',
        key: memoryId,
        data: {
          memoryId,
          text,
          block: {
            anchorActionId: block.anchorActionId,
            sourceStart: block.sourceStart,
            sourceEnd: block.sourceEnd,
          },
          usage,
        },
      },
      { ...meta, model: result.model, usage: result.usage },
    );
    // Nothing appended means another run wrote it first (or the story moved): stop this pass.
    // That run recorded its own call; this one's tokens were spent for nothing, and are recorded.
    if (handled.events.length === 0) {
      await this.recordUsage(adventureId, state, 'memory', usage, meta);
      return null;
    }
    await this.countSpend(handled.state, usage);
    return handled.state;
  }

  /** One chapter, from its span's own story text, with the summary model. */
  private async writeChapter(
    adventureId: string,
    state: AdventureState,
    span: ChapterSpan,
    meta: Record<string, unknown> & { actor: string },
  ): Promise<AdventureState | null> {
    const texts = await this.adventures.readActionTexts(adventureId, span.entries);
    const brief = await this.brief(state, texts);
    const work = chapterWork(adventureId, state, span, texts, brief, historyBudgetFloor(state));
    return this.summarise(adventureId, state, meta, work);
  }

  /** The oldest chapters folded into the summary, with the summary model. */
  private async foldChapters(
    adventureId: string,
    state: AdventureState,
    fold: FoldPlan,
    meta: Record<string, unknown> & { actor: string },
  ): Promise<AdventureState | null> {
    const texts = fold.chapters.map((chapter) => chapter.text);
    return this.summarise(
      adventureId,
      state,
      meta,
      foldWork(adventureId, fold, await this.brief(state, texts)),
    );
  }

  /**
   * Asks the summary model, then sends what it wrote as `command(text)`. A reply that is empty,
   * or a command that appended nothing (another run wrote it first, or the story moved), is
   * recorded as a call spent for nothing: null then, and an empty reply throws.
   */
  private async summarise(
    adventureId: string,
    state: AdventureState,
    meta: Record<string, unknown> & { actor: string },
    { prompt, maxTokens, command }: SummaryWork,
  ): Promise<AdventureState | null> {
    const result = await this.models.summary.complete({
      ...prompt,
      model: this.modelName(state, 'summary'),
      cacheKey: state.id ?? undefined,
      temperature: BACKGROUND_TEMPERATURE,
      maxTokens,
      purpose: 'summary',
    });
    const usage = usageOf(result);
    const text = cleanReply(result.text);
    if (!text) {
      await this.recordUsage(adventureId, state, 'summary', usage, meta);
      throw new Error('the model returned an empty summary');
    }
    const handled = await this.adventures.handle(adventureId, command(text, usage), {
      ...meta,
      model: result.model,
      usage: result.usage,
    });
    if (handled.events.length === 0) {
      await this.recordUsage(adventureId, state, 'summary', usage, meta);
      return null;
    }
    await this.countSpend(handled.state, usage);
    return handled.state;
  }

  /**
   * Writes the summary again from scratch, now (the player asked): the worker's memories on the
   * path in depth order, then the raw story past the last of them, in chunks of 2000 tokens (the
   * newest REGENERATE_MAX_CHUNKS), folded into one summary a chunk at a time. Anchored on the
   * tip, so the cadence counts from there. Throws SummarizerError when a model call fails;
   * nothing is appended then.
   */
  async regenerateSummary(
    adventureId: string,
    metadata: CommandMetadata,
  ): Promise<RegeneratedSummary> {
    const state = await this.adventures.get(adventureId);
    const entries = storyEntries(state);
    const tip = entries[entries.length - 1];
    if (!tip) throw new SummarizerError('the story has no text to summarize yet');
    const encoding = state.settings.encoding;
    const memories = memoriesOnPath(state)
      .filter((memory) => memory.createdBy === 'worker' && memory.sourceEnd !== null)
      .sort((a, b) => (a.sourceEnd ?? 0) - (b.sourceEnd ?? 0));
    const covered = memories.length > 0 ? (memories[memories.length - 1].sourceEnd ?? -1) : -1;
    const budget = REGENERATE_MAX_CHUNKS * MEMORY_EXCERPT_TOKENS;
    // Only the newest raw actions that can fit are read (the cached token counts decide which).
    const raw: typeof entries = [];
    let tokens = 0;
    for (let i = entries.length - 1; i >= 0 && entries[i].depth > covered && tokens < budget; i--) {
      raw.unshift(entries[i]);
      tokens += entries[i].tokens;
    }
    const rawTexts = await this.adventures.readActionTexts(adventureId, raw);
    const pieces = [...memories.map((memory) => `- ${memory.text}`), ...rawTexts];
    const chunks = chunkByTokens(pieces, MEMORY_EXCERPT_TOKENS, encoding).slice(
      -REGENERATE_MAX_CHUNKS,
    );
    const brief = await this.brief(state, rawTexts.length > 0 ? rawTexts : pieces);
    let summary = '';
    let model = this.modelName(state, 'summary');
    const spent: ModelCallUsage[] = [];
    // Calls already answered are paid for even when a later one fails: recorded, then thrown.
    const refuse = async (message: string): Promise<never> => {
      const usage = sumUsage(spent);
      if (usage) await this.recordUsage(adventureId, state, 'summary', usage, metadata);
      throw new SummarizerError(message);
    };
    for (const chunk of chunks) {
      const prompt = summaryPrompt(brief, summary, chunk);
      let result;
      try {
        result = await this.models.summary.complete({
          ...prompt,
          model: this.modelName(state, 'summary'),
          cacheKey: state.id ?? undefined,
          temperature: BACKGROUND_TEMPERATURE,
          maxTokens: SUMMARY_MAX_TOKENS,
          purpose: 'summary',
        });
      } catch (error) {
        // The player is told what they can act on; the endpoint and the provider's words are not
        // theirs (the API logs the error it is handed).
        return refuse(
          `the summarizer failed: ${isModelError(error) ? error.playerMessage : 'an internal error'}`,
        );
      }
      spent.push(usageOf(result));
      summary = cleanReply(result.text);
      model = result.model;
      if (!summary) return refuse('the summarizer returned an empty summary');
    }
    const usage = sumUsage(spent);
    const summaryId = randomUUID();
    const handled = await this.adventures.handle(
      adventureId,
      {
        type: 'WriteRegeneratedSummary',
        key: summaryId,
        data: {
          summaryId,
          text: summary,
          span: { anchorActionId: tip.id, sourceStart: entries[0].depth, sourceEnd: tip.depth },
          ...(usage && { usage }),
        },
      },
      { ...metadata, model },
    );
    if (usage) await this.countSpend(handled.state, usage);
    return { summaryId, text: summary, version: handled.state.version };
  }

  /** Embeds memories with no vector for the current model, in writing order, 32 per request. */
  private async embedPending(
    adventureId: string,
    state: AdventureState,
    meta: Record<string, unknown> & { actor: string },
  ): Promise<number> {
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
      const embedded = await this.embedder.embed(batch.map(([, text]) => text));
      await this.recordUsage(
        adventureId,
        state,
        'embedding',
        { model: embedded.model, ...embedded.usage },
        meta,
      );
      await this.embeddings.save(
        model,
        batch.map(([hash], index) => ({ hash, vector: embedded.vectors[index] })),
      );
    }
    return pending.length;
  }

  /**
   * A model call no other event records (an embedding batch, a reply that could not be used)
   * is its own ModelUsageRecorded, so the log holds every token the user was charged. A call
   * that cost nothing (the offline embedder) records nothing.
   */
  private async recordUsage(
    adventureId: string,
    state: AdventureState,
    purpose: ModelCallPurpose,
    usage: ModelCallUsage,
    meta: Record<string, unknown> & { actor: string },
  ): Promise<void> {
    const handled = await this.adventures.handle(
      adventureId,
      { type: 'RecordModelUsage', data: { purpose, usage } },
      meta,
    );
    if (handled.events.length > 0) await this.countSpend(state, usage);
  }

  private async countSpend(state: AdventureState, usage: ModelCallUsage): Promise<void> {
    if (!this.options.countSpend || !state.ownerId) return;
    // The log is the truth; a counter that misses this is rebuilt from it tomorrow.
    await this.options.countSpend(state.ownerId, usage).catch(() => undefined);
  }
}
