// Canon is configuration with two readers: the prompt renders it, so the model is told the rule
// before it narrates, and the referee reads the same field, so a breach is refused. One field,
// one rendering of each rule, used by both.

import type { Canon, ForbiddenStatusChange } from './narrative.types';

export const CANON_HEADING = 'Campaign canon (these are true and may not be contradicted):';

function filled(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/** The sentence that states a forbidden change, in the prompt and in a rejection's fix alike. */
export function forbiddenChangeLine(rule: ForbiddenStatusChange): string {
  return `Nothing that is ${rule.from} can become ${rule.to}.`;
}

function completeForbiddenChanges(canon: Canon | null | undefined): ForbiddenStatusChange[] {
  const list = canon?.forbiddenStatusChanges;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (rule): rule is ForbiddenStatusChange =>
      typeof rule === 'object' && rule !== null && filled(rule.from) && filled(rule.to),
  );
}

/**
 * The canon section of the system block, as the seed renders it: the heading, a bullet per
 * non-empty rule, then a bullet per complete forbidden change; '' when there is no line. Canon
 * arrives as stored JSON, so anything malformed is skipped rather than trusted (one deliberate
 * difference from the seed: a whitespace-only from/to counts as missing, not as complete).
 */
export function renderCanon(canon: Canon | null | undefined): string {
  const lines: string[] = [];
  const rules = canon?.rules;
  if (Array.isArray(rules)) {
    for (const rule of rules) if (filled(rule)) lines.push(`- ${rule}`);
  }
  for (const rule of completeForbiddenChanges(canon)) lines.push(`- ${forbiddenChangeLine(rule)}`);
  return lines.length === 0 ? '' : `${CANON_HEADING}\n${lines.join('\n')}`;
}

function norm(status: string): string {
  return status.trim().toLowerCase();
}

/** The canon rule that forbids `from` → `to`, compared case-insensitively, if any. */
export function forbiddingRule(
  canon: Canon | null | undefined,
  from: string | undefined,
  to: string,
): ForbiddenStatusChange | undefined {
  if (from === undefined) return undefined;
  return completeForbiddenChanges(canon).find(
    (rule) => norm(rule.from) === norm(from) && norm(rule.to) === norm(to),
  );
}
