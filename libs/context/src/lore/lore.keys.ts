import type { KeySyntax, StoryCard } from '../context.types';

/** A card's keys as its syntax splits them (see KeySyntax); empty keys dropped. */
export function splitKeys(keys: string, syntax: KeySyntax = 'plain'): string[] {
  if (syntax === 'aid') return keys.split(',').filter((key) => key.trim() !== '');
  const parts = syntax === 'lines' ? keys.split('\n') : keys.split(',');
  return parts.map((key) => key.trim()).filter((key) => key !== '');
}

export function triggerKeys(card: Pick<StoryCard, 'keys' | 'keySyntax'>): string[] {
  return splitKeys(card.keys, card.keySyntax);
}

/** Longest regular-expression key accepted. */
export const MAX_REGEX_KEY_CHARS = 200;
/** A regular-expression key reads at most this many characters: the newest end of its window. */
export const REGEX_INPUT_CHARS = 4_000;

// SillyTavern's rule for a regex key: `/body/flags`, the body with no unescaped slash, so
// `/usr/bin/` stays a plain key. Flags are JavaScript's (the sticky and global ones dropped).
const REGEX_SHAPE = /^\/((?:[^/\\\n]|\\.)+)\/([dgimsuvy]*)$/;

export type RegexKey =
  | { ok: true; source: string; flags: string; regex: RegExp }
  | { ok: false; source: string; problem: string };

/** Whether a key has the `/…/flags` shape: only such keys are ever compiled as patterns. */
export function isRegexShaped(key: string): boolean {
  return REGEX_SHAPE.test(key);
}

const compiled = new Map<string, RegexKey>();

/**
 * A regex key compiled, or why it is refused. Node's regular expressions backtrack and cannot
 * be interrupted, so a key is refused when its shape can take super-linear time: a back-
 * reference, a quantified group that itself holds a quantifier or an alternation ((a+)+,
 * (a|aa)*), or more than one unbounded quantifier (.*x.*y). What remains runs in at most
 * quadratic time on an input cut to REGEX_INPUT_CHARS characters, a few milliseconds.
 */
export function regexKey(key: string): RegexKey {
  const cached = compiled.get(key);
  if (cached) return cached;
  const result = compileRegexKey(key);
  if (compiled.size > 10_000) compiled.clear();
  compiled.set(key, result);
  return result;
}

function compileRegexKey(key: string): RegexKey {
  const shape = REGEX_SHAPE.exec(key);
  if (!shape) return { ok: false, source: key, problem: 'not a /pattern/flags key' };
  const [, source, rawFlags] = shape;
  if (source.length > MAX_REGEX_KEY_CHARS) {
    return { ok: false, source, problem: `longer than ${MAX_REGEX_KEY_CHARS} characters` };
  }
  const danger = backtrackingRisk(source);
  if (danger) return { ok: false, source, problem: danger };
  const flags = [...new Set(rawFlags.replace(/[gy]/g, ''))].join('');
  try {
    return { ok: true, source, flags, regex: new RegExp(source, flags) };
  } catch (error) {
    return { ok: false, source, problem: (error as Error).message };
  }
}

/** Why a pattern may backtrack catastrophically, or null. A conservative scan of its source. */
export function backtrackingRisk(source: string): string | null {
  // Per open group: whether it holds a quantifier or an alternation so far.
  const groups: { quantified: boolean; alternation: boolean }[] = [];
  let unbounded = 0;
  let inClass = false;
  let lastGroup: { quantified: boolean; alternation: boolean } | null = null;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) return 'it uses a backreference';
      i++;
      lastGroup = null;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      lastGroup = null;
      continue;
    }
    if (c === '(') {
      groups.push({ quantified: false, alternation: false });
      lastGroup = null;
      // (?:, (?=, (?!, (?<=, (?<!, (?<name>: the prefix is not a quantifier.
      const prefix = /^\((?:\?(?::|=|!|<=|<!|<[A-Za-z_$][\w$]*>))?/.exec(source.slice(i))![0];
      i += prefix.length - 1;
      continue;
    }
    if (c === ')') {
      lastGroup = groups.pop() ?? null;
      // A group holding repetition makes its enclosing group hold it too: ((a+)b)+ nests.
      if (lastGroup && groups.length > 0 && (lastGroup.quantified || lastGroup.alternation)) {
        groups[groups.length - 1].quantified = true;
      }
      continue;
    }
    if (c === '|') {
      if (groups.length > 0) groups[groups.length - 1].alternation = true;
      continue;
    }
    const quantifier =
      c === '*' || c === '+' || c === '?'
        ? c
        : c === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(i))
          ? /^\{\d+(,\d*)?\}/.exec(source.slice(i))![0]
          : null;
    if (quantifier) {
      // A lazy or possessive-looking suffix is part of this quantifier.
      if (quantifier.length > 1) i += quantifier.length - 1;
      if (source[i + 1] === '?') i++;
      const isUnbounded = quantifier === '*' || quantifier === '+' || /,\}$/.test(quantifier);
      if (lastGroup && (lastGroup.quantified || lastGroup.alternation) && quantifier !== '?') {
        return 'a repeated group holds a quantifier or an alternation (nested repetition)';
      }
      if (isUnbounded && ++unbounded > 1) return 'it has more than one unbounded quantifier';
      if (groups.length > 0) groups[groups.length - 1].quantified = true;
      // A quantified group marks its parent as holding a quantifier too.
      lastGroup = null;
      continue;
    }
    lastGroup = null;
  }
  return null;
}
