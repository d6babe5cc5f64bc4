// The memory bank's constants, named once: the predecessor's cadence and sizes, so a story moved
// here keeps its memory rhythm.

export const MEMORY_INTERVAL = 6;
export const MEMORY_START = 12;
export const SUMMARY_INTERVAL = 15;
export const MAX_MEMORIES_PER_RUN = 5;
export const MAX_EMBED_BATCH = 32;
export const RETRIEVAL_WINDOW_TOKENS = 600;
export const RETRIEVAL_WINDOW_ACTIONS = 4;
export const VECTOR_CACHE_ADVENTURES = 8;
export const MEMORY_EXCERPT_TOKENS = 2000;
export const MEMORY_MAX_WORDS = 50;
export const SUMMARY_MAX_WORDS = 250;
export const MAX_CAST_MEMBERS = 8;
export const CAST_ENTRY_CHARS = 240;
export const SETTING_TOKENS = 300;
export const SUMMARY_MAX_TOKENS = 600;
export const BACKGROUND_TEMPERATURE = 0.3;
export const BACKGROUND_MAX_TOKENS = 400;
/** Blocks of story are joined as the prompt's history joins them. */
export const STORY_SEPARATOR = '\n\n';
/**
 * A chapter closes once its story holds this many tokens, or CHAPTER_ACTIONS actions, whichever
 * comes first: by size, so a chapter of long turns is not squeezed harder than one of short ones.
 */
export const CHAPTER_TOKENS = 3_000;
export const CHAPTER_ACTIONS = 24;
export const CHAPTER_MAX_WORDS = 120;
export const CHAPTER_MAX_TOKENS = 300;
export const MAX_CHAPTERS_PER_RUN = 5;
