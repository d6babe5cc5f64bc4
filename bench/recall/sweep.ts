// The recall share swept (`npm run bench -- recall --recall-share 0.3,0.5,0.7`): the dry run's
// prompt built again in process, as the preview builds it (hypotheticalTurn, the same
// retrieval, buildTurnContext's head and reader), with only the share of the history's budget
// the recalled passages take changed. What RECALL_SHARE is chosen by (BENCHMARKS.md).
import type { AdventureState } from '@chronicle/adventure';
import {
  hypotheticalTurn,
  storyReader,
  turnContextHead,
  type AdventureCommandHandler,
} from '@chronicle/adventure-store';
import { assembleContext } from '@chronicle/context';
import type { MemoryRetrievalService } from '@chronicle/memory-store';
import { normalizePrompt, type NormalizedPrompt } from './evidence';

/** The shares a `--recall-share` list names, each in (0, 1). */
export function parseShares(raw: string | undefined): number[] {
  if (raw === undefined) return [];
  const shares = raw.split(',').map(Number);
  if (shares.some((share) => !(share > 0 && share < 1))) {
    throw new Error(`--recall-share takes shares between 0 and 1, comma-separated; got ${raw}`);
  }
  return shares;
}

/** The memory-on prompt of the dry run asking `question` at `budget` with each share. */
export async function promptsByShare(
  adventures: AdventureCommandHandler,
  retrieval: MemoryRetrievalService,
  adventureId: string,
  question: string,
  budget: number,
  shares: readonly number[],
): Promise<Map<number, NormalizedPrompt>> {
  const stored = await adventures.get(adventureId);
  const head: AdventureState = {
    ...stored,
    settings: { ...stored.settings, contextTokenBudget: budget, memoryBankEnabled: true },
  };
  const { state, texts } = hypotheticalTurn(adventures, head, { type: 'story', text: question });
  const memories = await retrieval.retrieve(state, texts, head);
  const base = turnContextHead(state, {
    defaultModel: 'bench',
    memories,
    passages: memories?.passages ?? null,
  });
  const prompts = new Map<number, NormalizedPrompt>();
  for (const share of shares) {
    const built = await assembleContext(
      { ...base, settings: { ...base.settings, recallShare: share } },
      storyReader(texts, state),
    );
    prompts.set(share, normalizePrompt(built.system, built.story));
  }
  return prompts;
}
