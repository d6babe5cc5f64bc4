// Small builders for narrative test data, so specs state only what matters to them.

import type { Canon, Entity, NarrativeState, StateEvent } from '../src/narrative.types';

export function anEntity(id: string, fields: Partial<Entity> = {}): Entity {
  return { id, name: id.charAt(0).toUpperCase() + id.slice(1), kind: 'character', ...fields };
}

export function aPlace(id: string, fields: Partial<Entity> = {}): Entity {
  return anEntity(id, { kind: 'place', ...fields });
}

export function anItem(id: string, fields: Partial<Entity> = {}): Entity {
  return anEntity(id, { kind: 'item', ...fields });
}

export function aState(entities: Entity[] = [], facts: string[] = []): NarrativeState {
  return {
    entities: Object.fromEntries(entities.map((entity) => [entity.id, entity])),
    facts: facts.map((text) => ({ text })),
  };
}

/** The harbour scene most specs start from: Mira alive at the harbor, a lantern the player holds. */
export function aHarborState(): NarrativeState {
  return aState([
    anEntity('mira', { status: 'alive', at: 'harbor' }),
    aPlace('harbor', { name: 'The Harbor' }),
    aPlace('lighthouse', { name: 'The Lighthouse' }),
    anItem('lantern', { holder: 'player' }),
  ]);
}

export function aCanon(fields: Partial<Canon> = {}): Canon {
  return { rules: [], forbiddenStatusChanges: [], ...fields };
}

/** A `state` block holding these lines (objects are written as JSON Lines). */
export function aBlock(lines: Array<StateEvent | string | object>, close = true): string {
  const body = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line)));
  return ['```state', ...body, ...(close ? ['```'] : [])].join('\n');
}

export function aReply(narration: string, lines: Array<StateEvent | string | object>): string {
  return `${narration}\n\n${aBlock(lines)}`;
}
