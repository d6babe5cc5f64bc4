// Bounds on what one reply can put into the state and into the next prompt. A block past these
// limits is cut, and the cut is reported to the model as a rejection with a fix: a runaway or
// looping model costs one bounded note, never a crash or an unbounded event.

/** Candidate entries (lines or array elements, good or bad) read from one block. */
export const MAX_EVENTS_PER_BLOCK = 64;
/** UTF-8 bytes of one block's content that are read; the lines after the cut are rejected. */
export const MAX_BLOCK_BYTES = 16 * 1024;

export const MAX_ID_CHARS = 64;
export const MAX_NAME_CHARS = 80;
export const MAX_STATUS_CHARS = 40;
export const MAX_DESC_CHARS = 300;
export const MAX_FACT_CHARS = 300;
export const MAX_ABOUT_IDS = 8;

/** A rejection stores the raw line up to this length, so one huge line stays a small record. */
export const MAX_REJECTION_LINE_CHARS = 300;
/** How many known ids an "unknown id" fix lists before "and N more". */
export const MAX_IDS_IN_FIX = 12;

/** The protagonist's id. Always a known holder, even before anything has entered. */
export const PLAYER_ID = 'player';
