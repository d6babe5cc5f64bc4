import { isRegexShaped, regexKey, splitKeys, unknownMacros } from '@chronicle/context';
import type { ImportReport, ParsedCard } from './lore.types';

/** Lines of each list the report holds at most; a 5,000-entry book would otherwise flood it. */
export const MAX_REPORT_LINES = 500;

function push<T>(list: T[], item: T): void {
  if (list.length < MAX_REPORT_LINES) list.push(item);
}

/** The report's per-card findings: regex keys that will not run, unknown macros, verbatim-only features. */
export function noteCard(
  report: ImportReport,
  index: number,
  card: ParsedCard,
  verbatimFeatures: string[],
): void {
  const note = { index, card: card.name };
  const keys = [
    ...splitKeys(card.keys, card.keySyntax),
    ...(card.conditions ?? []).flatMap((condition) => condition.keys),
  ];
  for (const key of keys) {
    if (!isRegexShaped(key)) continue;
    const compiled = regexKey(key);
    if (!compiled.ok) push(report.badRegexes, { ...note, key, problem: compiled.problem });
  }
  const macros = unknownMacros(card.entry);
  if (macros.length > 0) push(report.unknownMacros, { ...note, macros });
  if (verbatimFeatures.length > 0) {
    push(report.keptOnlyVerbatim, { ...note, features: verbatimFeatures });
  }
}
