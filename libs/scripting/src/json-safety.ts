// Values a script hands back arrive as JSON text from the sandbox. They are parsed here, on the
// host, and refused when they carry keys that would reach an object's prototype if a later
// merge or spread copied them (docs/scripting.md, S6).

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The first forbidden key found anywhere in `value`, or null. */
export function forbiddenKey(value: unknown, depth = 0): string | null {
  if (depth > 200) return '(nesting deeper than 200)';
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = forbiddenKey(item, depth + 1);
      if (found) return found;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return key;
    const found = forbiddenKey((value as Record<string, unknown>)[key], depth + 1);
    if (found) return found;
  }
  return null;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** JSON.parse that answers undefined instead of throwing. */
export function parseJson(text: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (typeof text !== 'string') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
