import { type DynamicModule, Global, type InjectionToken, Module } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import {
  createEmbedder,
  createModelClient,
  type Embedder,
  type ModelClient,
  type ModelConfig,
} from '@chronicle/llm';
import type { Kysely } from 'kysely';
import { EmbeddingRepository } from './embedding.repository';
import { MemoryRetrievalService } from './memory-retrieval.service';
import { UpdateMemoryUseCase } from './update-memory.use-case';
import { VectorCache } from './vector.cache';
import { PassageVectorCache } from './passage-vector.cache';
import { StoryPassageRepository } from './story-passage.repository';
import { StoryRecallService } from './story-recall.service';
import { IndexStoryPassagesUseCase } from './index-story-passages.use-case';

export const MEMORY_MODEL_CLIENT = Symbol('MEMORY_MODEL_CLIENT');
export const SUMMARY_MODEL_CLIENT = Symbol('SUMMARY_MODEL_CLIENT');
export const MEMORY_EMBEDDER = Symbol('MEMORY_EMBEDDER');

export interface MemoryStoreOptions {
  /**
   * Each job's model configuration (libs/llm's `modelConfigsOf`): memories, summaries and
   * embeddings may each go to their own endpoint; no key → the offline narrator or embedder.
   */
  models: Record<'memory' | 'summary' | 'embedding', ModelConfig>;
  /**
   * Wraps the memory pass's model clients (the memory worker meters them, libs/metrics), given
   * the providers `inject` names.
   */
  wrapModelClient?: {
    inject: InjectionToken[];
    wrap: (client: ModelClient, ...deps: never[]) => ModelClient;
  };
  /** Wraps the embedder likewise (every process that embeds meters it). */
  wrapEmbedder?: {
    inject: InjectionToken[];
    wrap: (embedder: Embedder, ...deps: never[]) => Embedder;
  };
}

/**
 * The memory bank's infrastructure: the embeddings table, the vector cache, retrieval (for the
 * context worker), the story passages' index and recall, and the memory job's use case (for the
 * memory worker). Needs the
 * EventStoreModule and the AdventureStoreModule.
 */
@Global()
@Module({})
export class MemoryStoreModule {
  // eslint-disable-next-line max-lines-per-function -- a flat list of providers, one factory per class; split, the wiring would be read in two places
  static forRoot(options: MemoryStoreOptions): DynamicModule {
    return {
      module: MemoryStoreModule,
      providers: [
        ...(['memory', 'summary'] as const).map((job) => ({
          provide: job === 'memory' ? MEMORY_MODEL_CLIENT : SUMMARY_MODEL_CLIENT,
          inject: options.wrapModelClient?.inject ?? [],
          useFactory: (...deps: never[]) => {
            const client = createModelClient(options.models[job]);
            return options.wrapModelClient ? options.wrapModelClient.wrap(client, ...deps) : client;
          },
        })),
        {
          provide: MEMORY_EMBEDDER,
          inject: options.wrapEmbedder?.inject ?? [],
          useFactory: (...deps: never[]) => {
            const embedder = createEmbedder(options.models.embedding);
            return options.wrapEmbedder ? options.wrapEmbedder.wrap(embedder, ...deps) : embedder;
          },
        },
        {
          provide: EmbeddingRepository,
          useFactory: (db: Kysely<Database>) => new EmbeddingRepository(db),
          inject: [EVENT_STORE_DB],
        },
        {
          provide: VectorCache,
          useFactory: (embeddings: EmbeddingRepository) => new VectorCache(embeddings),
          inject: [EmbeddingRepository],
        },
        {
          provide: StoryPassageRepository,
          useFactory: (db: Kysely<Database>) => new StoryPassageRepository(db),
          inject: [EVENT_STORE_DB],
        },
        {
          provide: StoryRecallService,
          useFactory: (
            passages: StoryPassageRepository,
            adventures: AdventureCommandHandler,
            embedder: Embedder,
          ) =>
            new StoryRecallService(
              passages,
              adventures,
              embedder,
              new PassageVectorCache(passages),
            ),
          inject: [StoryPassageRepository, AdventureCommandHandler, MEMORY_EMBEDDER],
        },
        {
          provide: IndexStoryPassagesUseCase,
          useFactory: (
            adventures: AdventureCommandHandler,
            recall: StoryRecallService,
            budget: DailyTokenBudget | undefined,
          ) =>
            new IndexStoryPassagesUseCase(
              adventures,
              recall,
              budget && ((ownerId, usage) => budget.recordSpend(ownerId, usage, new Date())),
            ),
          inject: [
            AdventureCommandHandler,
            StoryRecallService,
            { token: DailyTokenBudget, optional: true },
          ],
        },
        {
          provide: MemoryRetrievalService,
          useFactory: (
            adventures: AdventureCommandHandler,
            embedder: Embedder,
            cache: VectorCache,
            recall: StoryRecallService,
          ) => new MemoryRetrievalService(adventures, embedder, cache, recall),
          inject: [AdventureCommandHandler, MEMORY_EMBEDDER, VectorCache, StoryRecallService],
        },
        {
          provide: UpdateMemoryUseCase,
          useFactory: (
            adventures: AdventureCommandHandler,
            memory: ModelClient,
            summary: ModelClient,
            embedder: Embedder,
            embeddings: EmbeddingRepository,
            budget: DailyTokenBudget | undefined,
          ) =>
            new UpdateMemoryUseCase(adventures, { memory, summary }, embedder, embeddings, {
              defaultModel: options.models.memory.model,
              jobModels: {
                memory: options.models.memory.jobModel,
                summary: options.models.summary.jobModel,
              },
              // With the AccountsModule present, every call is counted toward the daily budget.
              ...(budget && {
                countSpend: (ownerId, usage) => budget.recordSpend(ownerId, usage, new Date()),
              }),
            }),
          inject: [
            AdventureCommandHandler,
            MEMORY_MODEL_CLIENT,
            SUMMARY_MODEL_CLIENT,
            MEMORY_EMBEDDER,
            EmbeddingRepository,
            { token: DailyTokenBudget, optional: true },
          ],
        },
      ],
      exports: [
        MemoryRetrievalService,
        UpdateMemoryUseCase,
        EmbeddingRepository,
        StoryPassageRepository,
        StoryRecallService,
        IndexStoryPassagesUseCase,
        MEMORY_EMBEDDER,
      ],
    };
  }
}
