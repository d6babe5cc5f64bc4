import type { ChatRole, NarrationRequest } from './model-client.types';

// The predecessor's continue instruction, word for word. It goes after the story so the story bytes (and the
// system message) stay a stable prefix for the provider's prompt cache.
export const CONTINUE_INSTRUCTION =
  '[Continue the story directly from where it leaves off. Output only the story text.]';

export interface ChatMessages {
  system?: string;
  user: string;
}

/** Chat mode: the system text as the system message, the story plus the instruction as the user message. */
export function chatMessages(req: Pick<NarrationRequest, 'system' | 'story'>): ChatMessages {
  const user = `${req.story}\n\n${CONTINUE_INSTRUCTION}`;
  // a script that rewrote the context sends everything as the story with an empty system part
  return req.system.length > 0 ? { system: req.system, user } : { user };
}

/** One message of a chat prompt's story part; `start` is where its text begins in the story. */
export interface StoryMessage {
  role: ChatRole;
  text: string;
  start: number;
}

const STORY_SEPARATOR = '\n\n';

/**
 * Chat mode: the story as messages. Each of `storyRoles` is a message of its role and the text
 * between them the user's (the blank line between sections dropped at each cut); the last
 * message is the user's and ends with the continue instruction. Without `storyRoles`, one user
 * message, as `chatMessages` has it.
 */
export function storyMessages(req: Pick<NarrationRequest, 'story' | 'storyRoles'>): StoryMessage[] {
  const messages: StoryMessage[] = [];
  const user = (start: number, end: number) => {
    let from = start;
    let to = end;
    if (req.story.startsWith(STORY_SEPARATOR, from) && from > 0) from += STORY_SEPARATOR.length;
    if (to < req.story.length && to - from >= 2 && req.story.endsWith(STORY_SEPARATOR, to)) {
      to -= STORY_SEPARATOR.length;
    }
    if (to > from) messages.push({ role: 'user', text: req.story.slice(from, to), start: from });
  };
  let at = 0;
  for (const { start, end, role } of req.storyRoles ?? []) {
    if (start < at || end > req.story.length || end <= start) continue;
    user(at, start);
    messages.push({ role, text: req.story.slice(start, end), start });
    at = end;
  }
  user(at, req.story.length);
  const last = messages[messages.length - 1];
  if (last?.role === 'user') last.text = `${last.text}${STORY_SEPARATOR}${CONTINUE_INSTRUCTION}`;
  else messages.push({ role: 'user', text: CONTINUE_INSTRUCTION, start: req.story.length });
  return messages;
}

/** Completion mode: the system text, a blank line, then the story. */
export function completionPrompt(req: Pick<NarrationRequest, 'system' | 'story'>): string {
  return req.system.length > 0 ? `${req.system}\n\n${req.story}` : req.story;
}
