// Save-time checks on a script's sources. Sizes are checked here; syntax is checked by
// compiling in the sandbox (only a JavaScript engine can say), whose error this module turns
// into a line and a column.
import { SCRIPT_LIMITS } from './scripting.limits';
import type { HookName, ScriptSources } from './scripting.types';

export type SourceField = keyof ScriptSources;
export const SOURCE_FIELDS: readonly SourceField[] = ['library', 'input', 'context', 'output'];

export interface SourceProblem {
  field: SourceField | 'name';
  message: string;
  line?: number;
  column?: number;
}

const encoder = new TextEncoder();

export function sourceSizeProblems(sources: Partial<ScriptSources>): SourceProblem[] {
  const problems: SourceProblem[] = [];
  for (const field of SOURCE_FIELDS) {
    const source = sources[field];
    if (source === undefined) continue;
    const limit = field === 'library' ? SCRIPT_LIMITS.libraryBytes : SCRIPT_LIMITS.hookBytes;
    // A UTF-8 byte is at most one UTF-16 unit, so the cheap length settles most sources.
    if (source.length * 3 <= limit) continue;
    const bytes = encoder.encode(source).length;
    if (bytes > limit) {
      problems.push({ field, message: `${field} is ${bytes} bytes; the limit is ${limit}` });
    }
  }
  return problems;
}

/**
 * A compile error's message as V8 in isolated-vm words it, "Unexpected token ';' [input.js:3:9]",
 * split into the message and its position.
 */
export function syntaxProblem(field: SourceField, compileError: string): SourceProblem {
  const match = /^(.*?)\s*\[[^\]]*?:(\d+):(\d+)\]\s*$/s.exec(compileError);
  if (!match) return { field, message: compileError };
  return { field, message: match[1], line: Number(match[2]), column: Number(match[3]) };
}

/** The file name a source compiles under; it shows in positions and stack traces. */
export function sourceFileName(field: SourceField | HookName): string {
  return `${field}.js`;
}
