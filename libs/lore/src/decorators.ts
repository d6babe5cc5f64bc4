// Character Card V3 decorators: `@@name value` lines at the top of an entry's content, `@@@`
// lines a fallback for the decorator above them. Chronicle runs the ones its card model has
// (activate, dont_activate, depth, role, scan_depth, additional_keys, exclude_keys) and keeps
// the others verbatim; the entry the prompt gets is the content below them.

import type { CardCondition, CardPlacement } from '@chronicle/context';

export interface Decorated {
  /** The content without its decorator lines. */
  text: string;
  activation?: 'always' | 'inert';
  placement?: CardPlacement;
  scanActions?: number;
  /** @@activate_only_after N: not before N actions. */
  delay?: number;
  conditions: CardCondition[];
  /** Decorators present that Chronicle keeps only verbatim. */
  unsupported: string[];
}

const RUN = new Set([
  'activate',
  'dont_activate',
  'depth',
  'role',
  'scan_depth',
  'additional_keys',
  'exclude_keys',
  'activate_only_after',
]);

export function readDecorators(content: string): Decorated {
  const result: Decorated = { text: content, conditions: [], unsupported: [] };
  if (!content.startsWith('@@')) return result;
  const lines = content.split('\n');
  let i = 0;
  for (; i < lines.length && lines[i].startsWith('@@'); i++) {
    const line = lines[i];
    if (line.startsWith('@@@')) {
      // A fallback applies only when the decorator above it is not understood; every decorator
      // Chronicle runs is understood, so a fallback is kept verbatim (in the source) and skipped.
      continue;
    }
    const match = /^@@([a-z_]+)\s*(.*)$/.exec(line.trim());
    if (!match) continue;
    const [, name, value] = match;
    if (!RUN.has(name)) {
      if (!result.unsupported.includes(`@@${name}`)) result.unsupported.push(`@@${name}`);
      continue;
    }
    const int = Number.parseInt(value, 10);
    switch (name) {
      case 'activate':
        result.activation = 'always';
        break;
      case 'dont_activate':
        result.activation = 'inert';
        break;
      case 'depth':
        if (Number.isInteger(int) && int >= 0) {
          result.placement = { ...result.placement, kind: 'depth', depth: int };
        }
        break;
      case 'role':
        if (value === 'system' || value === 'user' || value === 'assistant') {
          result.placement = { kind: 'depth', depth: 4, ...result.placement, role: value };
        }
        break;
      case 'activate_only_after':
        if (Number.isInteger(int) && int >= 0) result.delay = int;
        break;
      case 'scan_depth':
        if (Number.isInteger(int) && int >= 0) result.scanActions = int;
        break;
      case 'additional_keys':
      case 'exclude_keys':
        result.conditions.push({
          mode: name === 'additional_keys' ? 'anyOf' : 'noneOf',
          keys: value
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean),
        });
        break;
    }
  }
  result.text = lines.slice(i).join('\n');
  return result;
}
