// Corrections: the player is the final authority and sets part of the state directly. Canon does
// not bind the player (a campaign may forbid the dead from rising; its author may still raise
// someone), but the state stays a consistent document: ids are slugs, a thing is only ever at a
// place that exists, a holder exists, and removing an entity removes every reference to it.
//
// `applyCorrection` is what the API runs before appending a correction: an invalid one throws
// `InvalidCorrectionError`, whose message says what to fix (a 400/422 at the edge).

import { ENTITY_KINDS, aKind, collapseWhitespace, isSlug } from './event-shape.validator';
import {
  MAX_ABOUT_IDS,
  MAX_DESC_CHARS,
  MAX_FACT_CHARS,
  MAX_NAME_CHARS,
  MAX_STATUS_CHARS,
  PLAYER_ID,
} from './narrative.limits';
import { findEntity, hasFact, withEntity } from './narrative.state';
import type { Correction, Entity, NarrativeState } from './narrative.types';

export class InvalidCorrectionError extends Error {
  override readonly name = 'InvalidCorrectionError';
}

function fail(message: string): never {
  throw new InvalidCorrectionError(message);
}

function requireId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !isSlug(value)) {
    fail(`${field} must be an id: a lower-case slug such as "mira" or "old-mill".`);
  }
  return value;
}

function requireEntity(state: NarrativeState, value: unknown, field: string): Entity {
  const id = requireId(value, field);
  const entity = findEntity(state, id);
  if (!entity) {
    const known = Object.keys(state.entities).sort();
    fail(
      `${field} "${id}" is not in the narrative state; ` +
        (known.length > 0
          ? `known ids: ${known.slice(0, 12).join(', ')}${known.length > 12 ? ` and ${known.length - 12} more` : ''}.`
          : 'add the entity first.'),
    );
  }
  return entity;
}

function requireText(value: unknown, field: string, max: number): string {
  const text = typeof value === 'string' ? collapseWhitespace(value) : '';
  if (text === '') fail(`${field} must be a non-empty string.`);
  if (text.length > max) fail(`${field} must be at most ${max} characters (it is ${text.length}).`);
  return text;
}

function optionalText(value: unknown, field: string, max: number): string | undefined {
  return value === undefined || value === null ? undefined : requireText(value, field, max);
}

function requirePlace(state: NarrativeState, value: unknown, field: string): string {
  const place = requireEntity(state, value, field);
  if (place.kind !== 'place') fail(`${field} "${place.id}" is ${aKind(place.kind)}, not a place.`);
  return place.id;
}

function withoutKey<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const copy = { ...value };
  delete copy[key];
  return copy;
}

function checkEntity(state: NarrativeState, raw: unknown): Entity {
  if (typeof raw !== 'object' || raw === null) fail('entity must be an object.');
  const input = raw as Partial<Record<keyof Entity, unknown>>;
  const id = requireId(input.id, 'entity.id');
  if (Object.prototype.hasOwnProperty.call(state.entities, id)) {
    fail(`entity.id "${id}" already exists; choose a new id or correct the existing entity.`);
  }
  if (typeof input.kind !== 'string' || !(ENTITY_KINDS as readonly string[]).includes(input.kind)) {
    fail(`entity.kind must be one of: ${ENTITY_KINDS.join(', ')}.`);
  }
  const entity: Entity = {
    id,
    name: requireText(input.name, 'entity.name', MAX_NAME_CHARS),
    kind: input.kind as Entity['kind'],
  };
  const status = optionalText(input.status, 'entity.status', MAX_STATUS_CHARS);
  if (status !== undefined) entity.status = status.toLowerCase();
  if (input.at !== undefined && input.at !== null) {
    entity.at = requirePlace(state, input.at, 'entity.at');
  }
  if (input.holder !== undefined && input.holder !== null) {
    if (entity.at !== undefined) fail('entity cannot have both at and holder; give one.');
    entity.holder = requireEntity(state, input.holder, 'entity.holder').id;
  }
  const desc = optionalText(input.desc, 'entity.desc', MAX_DESC_CHARS);
  if (desc !== undefined) entity.desc = desc;
  return entity;
}

function removeEntity(state: NarrativeState, id: string): NarrativeState {
  const entities: Record<string, Entity> = {};
  for (const [key, entity] of Object.entries(state.entities)) {
    if (key === id) continue;
    let kept = entity;
    if (kept.at === id) kept = withoutKey(kept, 'at');
    if (kept.holder === id) kept = withoutKey(kept, 'holder');
    entities[key] = kept;
  }
  const facts = state.facts.map((fact) => {
    if (!fact.about?.includes(id)) return fact;
    const about = fact.about.filter((other) => other !== id);
    return about.length > 0 ? { text: fact.text, about } : { text: fact.text };
  });
  return { entities, facts };
}

/** Applies one correction, or throws `InvalidCorrectionError` saying what to fix. Pure. */
// eslint-disable-next-line max-lines-per-function -- one switch over the correction ops, each a few lines
export function applyCorrection(state: NarrativeState, correction: Correction): NarrativeState {
  if (typeof correction !== 'object' || correction === null)
    fail('a correction must be an object.');
  switch (correction.op) {
    case 'rename': {
      const entity = requireEntity(state, correction.id, 'id');
      return withEntity(state, {
        ...entity,
        name: requireText(correction.name, 'name', MAX_NAME_CHARS),
      });
    }
    case 'setStatus': {
      const entity = requireEntity(state, correction.id, 'id');
      if (correction.status === null) return withEntity(state, withoutKey(entity, 'status'));
      const status = requireText(correction.status, 'status', MAX_STATUS_CHARS).toLowerCase();
      return withEntity(state, { ...entity, status });
    }
    case 'move': {
      const entity = requireEntity(state, correction.id, 'id');
      if (correction.to === null) return withEntity(state, withoutKey(entity, 'at'));
      if (entity.kind === 'place') fail(`"${entity.id}" is a place; places do not move.`);
      const at = requirePlace(state, correction.to, 'to');
      return withEntity(state, { ...withoutKey(entity, 'holder'), at });
    }
    case 'setHolder': {
      const item = requireEntity(state, correction.item, 'item');
      if (correction.holder === null) return withEntity(state, withoutKey(item, 'holder'));
      const holder = requireEntity(state, correction.holder, 'holder');
      if (item.kind === 'place') fail(`"${item.id}" is a place and cannot be held.`);
      if (holder.id === item.id) fail('an item cannot hold itself.');
      if (holder.kind === 'place') {
        fail(`"${holder.id}" is a place; to put "${item.id}" there, use move.`);
      }
      return withEntity(state, { ...withoutKey(item, 'at'), holder: holder.id });
    }
    case 'setDesc': {
      const entity = requireEntity(state, correction.id, 'id');
      if (correction.desc === null) return withEntity(state, withoutKey(entity, 'desc'));
      return withEntity(state, {
        ...entity,
        desc: requireText(correction.desc, 'desc', MAX_DESC_CHARS),
      });
    }
    case 'addEntity':
      return withEntity(state, checkEntity(state, correction.entity));
    case 'removeEntity': {
      const id = requireId(correction.id, 'id');
      if (!Object.prototype.hasOwnProperty.call(state.entities, id)) {
        fail(
          id === PLAYER_ID
            ? 'the player is implicit and cannot be removed; correct its fields instead.'
            : `id "${id}" is not in the narrative state; nothing to remove.`,
        );
      }
      return removeEntity(state, id);
    }
    case 'addFact': {
      const text = requireText(correction.text, 'text', MAX_FACT_CHARS);
      if (hasFact(state, text)) fail('that fact is already in the narrative state.');
      const about = correction.about ?? [];
      if (!Array.isArray(about) || about.length > MAX_ABOUT_IDS) {
        fail(`about must be a list of at most ${MAX_ABOUT_IDS} ids.`);
      }
      const ids = [...new Set(about.map((id, i) => requireEntity(state, id, `about[${i}]`).id))];
      const fact = ids.length > 0 ? { text, about: ids } : { text };
      return { ...state, facts: [...state.facts, fact] };
    }
    case 'removeFact': {
      const text = requireText(correction.text, 'text', MAX_FACT_CHARS + 1000);
      const key = text.toLowerCase();
      const facts = state.facts.filter((fact) => fact.text.trim().toLowerCase() !== key);
      if (facts.length === state.facts.length) {
        fail('no fact with that text is in the narrative state; send the text exactly as shown.');
      }
      return { ...state, facts };
    }
    default:
      return fail(
        `unknown correction op "${String((correction as { op?: unknown }).op)}"; use one of: rename, setStatus, move, setHolder, setDesc, addEntity, removeEntity, addFact, removeFact.`,
      );
  }
}

/** Applies corrections in order; the first invalid one throws, naming its position. */
export function applyCorrections(
  state: NarrativeState,
  corrections: readonly Correction[],
): NarrativeState {
  return corrections.reduce((current, correction, index) => {
    try {
      return applyCorrection(current, correction);
    } catch (error) {
      if (error instanceof InvalidCorrectionError) {
        throw new InvalidCorrectionError(`correction ${index + 1}: ${error.message}`);
      }
      throw error;
    }
  }, state);
}
