// The two background prompts, the predecessor's, so its memories and summaries read the same. The system prompts are fixed text, so a
// provider's prefix cache serves them; everything that varies is in the user message.

import { CHAPTER_MAX_WORDS, MEMORY_MAX_WORDS, SUMMARY_MAX_WORDS } from './memory.constants';

export const MEMORY_SYSTEM_PROMPT = [
  'You write one memory of a long interactive story, to be recalled later on its own.',
  `Reply with 1–2 sentences in the past tense, at most ${MEMORY_MAX_WORDS} words, stating concrete facts from the excerpt.`,
  'Keep what a later scene could turn on: who did what to whom, what was found, promised, lost or revealed.',
  'Write in the third person. "You" in the excerpt is the protagonist named in the Cast, or "the player" when none is named.',
  'Name the characters, because the memory is read without the story around it.',
  'No preamble: reply with the memory only.',
].join('\n');

export const SUMMARY_SYSTEM_PROMPT = [
  'You keep the running summary of a long interactive story.',
  `Reply with only the updated summary, in at most ${SUMMARY_MAX_WORDS} words of prose.`,
  'Keep the established facts, and compress old events harder than new ones.',
  'Write in the third person and name the characters; never address anyone as "you".',
].join('\n');

export const CHAPTER_SYSTEM_PROMPT = [
  'You write one chapter summary of a long interactive story: what happened in the excerpt, which is the whole chapter.',
  `Reply with only the chapter summary, in at most ${CHAPTER_MAX_WORDS} words of prose, in the past tense.`,
  'Keep what a later scene could turn on: who did what to whom, what was found, promised, lost or revealed, and the names, places and numbers involved.',
  'Write in the third person and name the characters; never address anyone as "you".',
].join('\n');

export interface BackgroundPrompt {
  system: string;
  user: string;
}

/** With no brief, exactly the old form: the excerpt and the cue. */
export function memoryPrompt(brief: string, excerpt: string): BackgroundPrompt {
  const parts = brief ? [brief] : [];
  parts.push(`Story excerpt:\n${excerpt.trim()}`, 'Memory:');
  return { system: MEMORY_SYSTEM_PROMPT, user: parts.join('\n\n') };
}

export function summaryPrompt(brief: string, current: string, events: string): BackgroundPrompt {
  const parts = brief ? [brief] : [];
  parts.push(
    `Current story summary:\n${current.trim() || '(none yet)'}`,
    `New events since the last update:\n${events.trim()}`,
    'Updated summary:',
  );
  return { system: SUMMARY_SYSTEM_PROMPT, user: parts.join('\n\n') };
}

/** One chapter, written from its span's own story text. */
export function chapterPrompt(brief: string, story: string): BackgroundPrompt {
  const parts = brief ? [brief] : [];
  parts.push(`Chapter:\n${story.trim()}`, 'Chapter summary:');
  return { system: CHAPTER_SYSTEM_PROMPT, user: parts.join('\n\n') };
}

/** A model's reply as stored: trimmed, a leading "Memory:"/"Summary:" echo dropped. */
export function cleanReply(text: string): string {
  return text
    .trim()
    .replace(/^(memory|updated summary|chapter summary|summary)\s*:\s*/i, '')
    .trim();
}
