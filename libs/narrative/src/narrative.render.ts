// How the state and the refusals are shown to the model. Both sit in the live part of the prompt,
// after the cached history, so their bytes matter only for being right and stable: the same
// state renders to the same bytes whatever order its entities were inserted in, and the wording
// never depends on anything but the state.

import { clipLine } from './event-shape.validator';
import type { Entity, EntityKind, NarrativeState, Rejection } from './narrative.types';

export const STATE_HEADING = 'Story state (authoritative; reuse these ids in your state block):';
const GROUPS: ReadonlyArray<[EntityKind, string]> = [
  ['character', 'Characters'],
  ['place', 'Places'],
  ['item', 'Items'],
  ['faction', 'Factions'],
  ['other', 'Other'],
];

/** How much of a refused line the note quotes, and how many refusals it lists. */
const NOTE_LINE_CHARS = 160;
const NOTE_MAX_REJECTIONS = 16;

function byId(a: Entity, b: Entity): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function entityLine(entity: Entity): string {
  const details: string[] = [];
  if (entity.status) details.push(entity.status);
  if (entity.at) details.push(`at ${entity.at}`);
  if (entity.holder) details.push(`held by ${entity.holder}`);
  const head = `- ${entity.id}: ${entity.name}${details.length ? ` (${details.join(', ')})` : ''}`;
  return entity.desc ? `${head}. ${entity.desc}` : head;
}

/** The `narrative_state` live section; '' for an empty state, which gets no section. */
export function renderForPrompt(state: NarrativeState): string {
  const entities = Object.values(state?.entities ?? {});
  const facts = state?.facts ?? [];
  if (entities.length === 0 && facts.length === 0) return '';
  const lines = [STATE_HEADING];
  for (const [kind, title] of GROUPS) {
    const group = entities.filter((entity) => entity.kind === kind).sort(byId);
    if (group.length === 0) continue;
    lines.push(`${title}:`, ...group.map(entityLine));
  }
  if (facts.length > 0) lines.push('Facts:', ...facts.map((fact) => `- ${fact.text}`));
  return lines.join('\n');
}

function quote(line: string): string {
  const flat = line.replace(/\s+/g, ' ').trim();
  return flat.length <= NOTE_LINE_CHARS ? flat : `${flat.slice(0, NOTE_LINE_CHARS - 1)}…`;
}

/**
 * The note on the previous AI turn's refusals, placed just above the reminder; '' when there
 * were none. It is shown once: a refusal the model has had one chance to fix is stale.
 */
export function renderRejections(rejected: readonly Rejection[] | null | undefined): string {
  const list = Array.isArray(rejected) ? rejected : [];
  if (list.length === 0) return '';
  const shown = list
    .slice(0, NOTE_MAX_REJECTIONS)
    .map((r) => `- ${quote(clipLine(String(r.line)))} — ${r.reason}. Fix: ${r.fix}`);
  const more = list.length - NOTE_MAX_REJECTIONS;
  if (more > 0) shown.push(`- and ${more} more not shown.`);
  return [
    '[Part of your last state block was not applied:',
    ...shown,
    "Apply these fixes in this turn's block where the change still holds.]",
  ].join('\n');
}
