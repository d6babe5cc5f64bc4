import type { NarrationRequest } from './model-client.types';

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

/** Completion mode: the system text, a blank line, then the story. */
export function completionPrompt(req: Pick<NarrationRequest, 'system' | 'story'>): string {
  return req.system.length > 0 ? `${req.system}\n\n${req.story}` : req.story;
}
