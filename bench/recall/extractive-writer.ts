// The memory bank and the chaptered summary written with no model: the memory worker's own pass
// (UpdateMemoryUseCase, its cadence, prompts and commands), answered by an extractive writer that
// keeps the span's most telling sentences verbatim (libs/llm's extractiveSummary, as offline mode
// writes chapters). It never says what the story did not, and never loses what it keeps to a
// paraphrase, so what memory on moves in the recall figures is the budget's doing: the summary
// and the memories are paid for with history and recalled passages.
import { randomUUID } from 'node:crypto';
import {
  extractiveSummary,
  type CompletionRequest,
  type CompletionResult,
  type ModelClient,
  type ModelStreamEvent,
} from '@chronicle/llm';
import { CHAPTER_MAX_WORDS, MEMORY_MAX_WORDS, SUMMARY_MAX_WORDS } from '@chronicle/memory';
import type { UpdateMemoryUseCase } from '@chronicle/memory-store';

/** The text between `heading` and `cue` in a background prompt's user message. */
function between(user: string, heading: string, cue: string): string {
  const at = user.indexOf(heading);
  if (at < 0) return '';
  const rest = user.slice(at + heading.length);
  const end = rest.lastIndexOf(cue);
  return (end < 0 ? rest : rest.slice(0, end)).trim();
}

const paragraphs = (text: string): string[] => text.split(/\n{2,}|\n- /).filter(Boolean);

/** The first `words` words, when no sentence is long enough to be extracted. */
const opening = (text: string, words: number) => text.split(/\s+/).slice(0, words).join(' ');

export function extractiveReply(user: string): string {
  if (/Memory:\s*$/.test(user)) {
    const excerpt = between(user, 'Story excerpt:', 'Memory:');
    return extractiveSummary(paragraphs(excerpt), MEMORY_MAX_WORDS) || opening(excerpt, 50);
  }
  if (/Chapter summary:\s*$/.test(user)) {
    const chapter = between(user, 'Chapter:', 'Chapter summary:');
    return extractiveSummary(paragraphs(chapter), CHAPTER_MAX_WORDS) || opening(chapter, 120);
  }
  const current = between(user, 'Current story summary:', 'New events since the last update:');
  const events = between(user, 'New events since the last update:', 'Updated summary:');
  const told = current === '(none yet)' ? [] : [current];
  return (
    extractiveSummary([...told, ...paragraphs(events)], SUMMARY_MAX_WORDS) || opening(events, 250)
  );
}

/** A model client that writes memories, chapters and summaries by extraction, for nothing. */
export const extractiveWriter: ModelClient = {
  streamNarration(): AsyncIterable<ModelStreamEvent> {
    throw new Error('the extractive writer writes memories and summaries, not narrations');
  },
  async complete(request: CompletionRequest): Promise<CompletionResult> {
    return {
      text: extractiveReply(request.user),
      usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 },
      model: 'extractive',
      finishReason: 'stop',
    };
  },
};

/**
 * Runs the memory pass until it has nothing left to write (a pass writes at most 5 memories
 * and 5 chapters): what the memory worker would have written by now. Returns how many passes.
 */
export async function writeMemoryBank(
  writer: UpdateMemoryUseCase,
  adventureId: string,
): Promise<number> {
  for (let pass = 1; ; pass++) {
    const outcome = await writer.execute({ adventureId, jobId: randomUUID() });
    if (outcome.errors.length > 0) {
      throw new Error(`the memory pass failed on ${adventureId}: ${outcome.errors.join('; ')}`);
    }
    if (outcome.memoriesWritten + outcome.chaptersWritten === 0 && !outcome.summaryWritten) {
      return pass;
    }
  }
}
