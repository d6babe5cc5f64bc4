// The Context hook's view of a prompt (docs/scripting.md §3.2): AI Dungeon's layout, which scripts parse by
// its headings, not Chronicle's cache-friendly native layout. And what a script's returned text
// means for the prompt that is sent: unchanged, an appended suffix, or a rewrite.
import type { ContextChange } from './scripting.types';

export interface ContextViewParts {
  /** Plot Essentials, or `state.memory.context` when a script set it. */
  plotEssentials: string;
  /** Triggered card entries, in the order the context includes them. */
  lore: readonly string[];
  summary: string;
  memories: readonly string[];
  /** Story actions on the window, oldest first; the last is the latest action. */
  history: readonly string[];
  authorsNote: string;
  frontMemory: string;
}

export interface ContextView {
  text: string;
  /** `info.memoryLength`: the characters of the Plot Essentials prefix (with its blank line). */
  memoryLength: number;
}

export function renderContextView(parts: ContextViewParts): ContextView {
  const essentials = parts.plotEssentials.trim();
  const prefix = essentials ? `${essentials}\n\n` : '';
  const blocks: string[] = [];
  if (parts.lore.length > 0) {
    blocks.push(`World Lore:\n${parts.lore.map((e) => e.trim()).join('\n')}`);
  }
  if (parts.summary.trim()) blocks.push(`Story Summary:\n${parts.summary.trim()}`);
  if (parts.memories.length > 0) blocks.push(`Memories:\n${parts.memories.join('\n')}`);
  const earlier = parts.history.slice(0, -1);
  const last = parts.history.at(-1);
  if (earlier.length > 0) blocks.push(`Recent Story:\n${earlier.join('')}`);
  if (parts.authorsNote.trim()) blocks.push(`[Author's note: ${parts.authorsNote.trim()}]`);
  let text = prefix + blocks.join('\n\n');
  if (last !== undefined) text += (blocks.length > 0 ? '\n' : '') + last;
  if (parts.frontMemory.trim()) text += parts.frontMemory.trim();
  return { text, memoryLength: prefix.length };
}

export type ContextResult =
  | { change: 'unchanged' }
  | { change: 'append'; suffix: string }
  | { change: 'rewrite'; story: string; keptEssentials: boolean }
  | { change: 'discarded'; reason: string };

/**
 * `mode` is the adventure's context-hook mode: `append-only` (AID's Optimized Context) keeps
 * the cached prefix, so a rewrite is discarded and an append needs `// @cache-compatible`.
 */
export function classifyContextResult(
  view: ContextView,
  result: string,
  options: { mode: 'full' | 'append-only'; cacheCompatible: boolean },
): ContextResult {
  if (result === view.text || result === '') return { change: 'unchanged' };
  if (result.startsWith(view.text)) {
    const suffix = result.slice(view.text.length);
    if (options.mode === 'append-only' && !options.cacheCompatible) {
      return { change: 'discarded', reason: 'append-only context needs // @cache-compatible' };
    }
    return { change: 'append', suffix };
  }
  if (options.mode === 'append-only') {
    return { change: 'discarded', reason: 'append-only context discards a rewrite' };
  }
  const prefix = view.text.slice(0, view.memoryLength);
  const keptEssentials = view.memoryLength > 0 && result.startsWith(prefix);
  // Plot Essentials already sit in the system block: a kept prefix is not sent twice.
  return {
    change: 'rewrite',
    story: keptEssentials ? result.slice(prefix.length) : result,
    keptEssentials,
  };
}

export function contextChangeOf(result: ContextResult): ContextChange {
  return result.change;
}

/** Whether a source opts into append-only context (its first line). */
export function isCacheCompatible(source: string): boolean {
  return /^\s*\/\/\s*@cache-compatible\b/.test(source);
}

/**
 * A rewritten story cut from the front to fit `maxChars` (AID truncates to maxChars; docs/scripting.md, S13:
 * a rewrite never exceeds the budget).
 */
export function fitRewrite(story: string, maxChars: number): string {
  return story.length <= maxChars ? story : story.slice(story.length - Math.max(0, maxChars));
}
