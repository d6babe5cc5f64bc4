import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DailyTokenBudget } from '@chronicle/accounts';
import {
  findMemory,
  NotFoundError,
  storyPath,
  type AdventureState,
  type PathEntry,
  type ModelCallUsage,
} from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  buildTurnContext,
  contextManifest,
  hypotheticalTurn,
  type ContextManifest,
  type HypotheticalInput,
} from '@chronicle/adventure-store';
import type { RecalledPassages, RetrievedMemories } from '@chronicle/context';
import { defuseStateFences } from '@chronicle/narrative';
import { MemoryRetrievalService } from '@chronicle/memory-store';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';
import { requestMetadata } from '../http/request-actor';

/**
 * The context the next turn would send, built by the same function the context worker runs
 * (libs/adventure-store's `buildTurnContext`), without calling the narrator. Retrieval embeds
 * the story's tail with the real embedder, so that call is paid for like a turn's: recorded as
 * ModelUsageRecorded and counted toward the daily budget (the route is held to the turn limit).
 * Given an action, the context is the one that action's turn would send (see hypotheticalTurn).
 * And the exact prompt of the last turn, rebuilt the same way from the log (no model call).
 */
@Injectable()
export class ContextPreviewUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly memories: MemoryRetrievalService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly budget: DailyTokenBudget,
  ) {}

  async preview(adventureId: string, action?: HypotheticalInput) {
    const head = await this.adventures.get(adventureId);
    const { state, texts } = action
      ? hypotheticalTurn(this.adventures, head, action)
      : { state: head, texts: this.adventures };
    // The same retrieval as a turn's; only a real turn records which memories it used.
    // The passage index is caught up from the log's projection, never the supposed action.
    const memories = await this.memories.retrieve(state, texts, head);
    if (memories?.usage) await this.recordUsage(head, memories.usage);
    const built = await buildTurnContext(texts, state, {
      defaultModel: this.config.modelName,
      memories,
      passages: memories?.passages ?? null,
    });
    return {
      version: head.version,
      system: built.system,
      story: built.story,
      report: built.report,
      manifest: contextManifest(built),
    };
  }

  /**
   * The last turn's prompt. A Narrated event keeps the prompt's sha256, not its text; the text
   * is rebuilt from the projection the worker read (at the event that started the turn, or just
   * before the narration when something changed in between) with the memories the turn used,
   * and answered only when it hashes to what was sent.
   */
  async lastTurnPrompt(adventureId: string) {
    const head = await this.adventures.get(adventureId);
    const last = head.lastContext;
    if (!last) {
      throw new NotFoundError(
        `adventure ${adventureId} has no narrated turn yet; act first, or preview the next context with POST …/context/preview`,
      );
    }
    const manifest = last.manifest as unknown as ContextManifest;
    const before = await this.adventures.loadAt(adventureId, last.version - 1);
    const requestedAt = before.inFlight?.requestedAtVersion;
    const candidates =
      requestedAt !== undefined && requestedAt < before.version
        ? [await this.adventures.loadAt(adventureId, requestedAt), before]
        : [before];
    for (const state of candidates) {
      const built = await buildTurnContext(this.adventures, state, {
        defaultModel: manifest.settings?.model ?? this.config.modelName,
        memories: usedMemories(state, manifest),
        passages: await usedPassages(this.adventures, state, manifest),
      });
      if (
        sha256(built.system) === manifest.sha256?.system &&
        sha256(built.story) === manifest.sha256?.story
      ) {
        return {
          turnId: last.turnId,
          actionId: last.actionId,
          version: last.version,
          builtAtVersion: state.version,
          system: built.system,
          story: built.story,
        };
      }
    }
    throw new NotFoundError(
      `the prompt of turn ${last.turnId} cannot be rebuilt byte for byte from the log (its recorded sha256 does not match a rebuild); its manifest is at GET …/context`,
    );
  }

  private async recordUsage(state: AdventureState, usage: ModelCallUsage): Promise<void> {
    if (state.id === null) return;
    const handled = await this.adventures.handle(
      state.id,
      { type: 'RecordModelUsage', data: { purpose: 'retrieval', usage } },
      requestMetadata(),
    );
    if (handled.events.length > 0 && state.ownerId) {
      await this.budget.recordSpend(state.ownerId, usage, new Date()).catch(() => undefined);
    }
  }
}

/** The memories a turn used, with their texts as the projection had them then. */
function usedMemories(state: AdventureState, manifest: ContextManifest): RetrievedMemories | null {
  if (!Array.isArray(manifest.memories)) return null;
  return {
    used: manifest.memories.map((used) => ({
      ...used,
      text: findMemory(state, used.id)?.text ?? '',
    })),
    ...(manifest.memoryError ? { error: manifest.memoryError } : {}),
  };
}

/**
 * The passages a turn recalled, with their texts read back from the log at the versions the
 * path reads (the story's own text, as the turn sent it), in the order the prompt had them.
 */
async function usedPassages(
  adventures: AdventureCommandHandler,
  state: AdventureState,
  manifest: ContextManifest,
): Promise<RecalledPassages | null> {
  if (!manifest.passages) return null;
  const used = manifest.passages.used;
  const byId = new Map(storyPath(state).map((entry) => [entry.id, entry]));
  const entries = used.map((passage) => byId.get(passage.actionId));
  if (entries.some((entry) => entry === undefined)) return { candidates: [] };
  const texts = await adventures.readActionTexts(state.id ?? '', entries as PathEntry[]);
  return {
    candidates: used.map((passage, i) => ({ ...passage, text: defuseStateFences(texts[i]) })),
    ...(manifest.passages.error !== undefined && { error: manifest.passages.error }),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
