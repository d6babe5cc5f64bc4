// What a hook's resolved result means, per hook (docs/scripting.md §1.1 and §3.6). The harness inside the
// isolate has already picked the result among the three styles (completion value, a
// `modifier(text)` call, the globals); this decides what Chronicle does with it.
import { SCRIPT_LIMITS } from './scripting.limits';
import type { HookName } from './scripting.types';

export const AID_MESSAGES = Object.freeze({
  contextStopped:
    'Sorry, the AI is stumped. Edit/retry your previous action, or write something to help it along.',
  emptyInput: 'script returned empty input',
});

export type HookVerdict =
  /** Text (possibly unchanged) goes on to the next script, or into the turn. */
  | { kind: 'text'; text: string; note?: string }
  /** The turn stops here: no model call. */
  | { kind: 'stop'; note?: string; message?: string }
  /** The run counts as not having happened. */
  | { kind: 'invalid'; error: string }
  | { kind: 'failed'; error: string };

const MAX_TEXT: Record<HookName, number> = {
  input: SCRIPT_LIMITS.inputTextChars,
  context: SCRIPT_LIMITS.contextTextChars,
  output: SCRIPT_LIMITS.outputTextChars,
};

export function judgeHookResult(
  hook: HookName,
  incoming: string,
  result: { text: unknown; stop: unknown },
): HookVerdict {
  const { text } = result;
  if (text !== null && typeof text !== 'string') {
    return { kind: 'invalid', error: `the ${hook} hook returned text that is not a string` };
  }
  if (typeof text === 'string' && text.length > MAX_TEXT[hook]) {
    return {
      kind: 'invalid',
      error: `the ${hook} hook returned more than ${MAX_TEXT[hook]} characters`,
    };
  }
  const stop = result.stop === true;
  switch (hook) {
    case 'input':
      if (stop || text === null) return { kind: 'stop' };
      if (text === '') return { kind: 'stop', note: AID_MESSAGES.emptyInput };
      return { kind: 'text', text };
    case 'context':
      if (stop) return { kind: 'stop', message: AID_MESSAGES.contextStopped };
      // "" builds the context as if the script had not run (AID parity).
      if (text === null || text === '') return { kind: 'text', text: incoming };
      return { kind: 'text', text };
    case 'output':
      if (text === null || text === '') {
        return {
          kind: 'failed',
          error: "the output hook returned empty text; the model's text is kept",
        };
      }
      if (stop) {
        return {
          kind: 'text',
          text: text === 'stop' ? incoming : text,
          note: 'stop is ignored in the output hook',
        };
      }
      return { kind: 'text', text };
  }
}

/**
 * AI Dungeon hands onInput a do or say as "\n> You go to the store.\n" (scripts match on that
 * shape); Chronicle stores "> You go to the store.". The newlines are added for the script and
 * one of each taken off its result; a story action is passed as typed.
 */
export function inputForScripts(type: 'do' | 'say' | 'story', stored: string): string {
  return type === 'story' ? stored : `\n${stored}\n`;
}

export function inputFromScripts(type: 'do' | 'say' | 'story', text: string): string {
  if (type === 'story') return text;
  let out = text;
  if (out.startsWith('\n')) out = out.slice(1);
  if (out.endsWith('\n')) out = out.slice(0, -1);
  return out;
}
