// The narrative state and its pure evolution. `evolve` does not validate: the referee decides
// what is accepted. It is total instead, because the fold replays accepted events after later
// corrections and retcons have changed what was true when they were accepted. An event whose
// subject no longer exists (withdrawn by a retcon, removed by a correction) changes nothing.

import { PLAYER_ID } from './narrative.limits';
import type { Entity, NarrativeState, StateEvent } from './narrative.types';

export function initialNarrativeState(): NarrativeState {
  return { entities: {}, facts: [] };
}

/**
 * The protagonist exists before anything enters: `player` is always a known holder, and the
 * model may move it or set its status without entering it first. It becomes a stored entity the
 * first time something changes it.
 */
export function implicitPlayer(): Entity {
  return { id: PLAYER_ID, name: 'Player', kind: 'character' };
}

/** The entity with this id, counting the implicit protagonist. */
export function findEntity(state: NarrativeState, id: string): Entity | undefined {
  if (Object.prototype.hasOwnProperty.call(state.entities, id)) return state.entities[id];
  return id === PLAYER_ID ? implicitPlayer() : undefined;
}

export function isPlace(state: NarrativeState, id: string): boolean {
  return findEntity(state, id)?.kind === 'place';
}

export function withEntity(state: NarrativeState, entity: Entity): NarrativeState {
  return { ...state, entities: { ...state.entities, [entity.id]: entity } };
}

function sameText(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

export function hasFact(state: NarrativeState, text: string): boolean {
  return state.facts.some((fact) => sameText(fact.text, text));
}

/** A copy whose entity record and fact list may be changed in place (entities are replaced, never edited). */
export function draftOf(state: NarrativeState): NarrativeState {
  return { entities: { ...state.entities }, facts: [...state.facts] };
}

/**
 * Applies one event to a draft in place; true when it changed something. The fold uses it so
 * that replaying a long path costs one copy, not one per event.
 */
export function evolveDraft(draft: NarrativeState, event: StateEvent): boolean {
  const put = (entity: Entity) => {
    draft.entities[entity.id] = entity;
    return true;
  };
  switch (event.type) {
    case 'enter': {
      if (Object.prototype.hasOwnProperty.call(draft.entities, event.id)) return false;
      const entity: Entity = { id: event.id, name: event.name, kind: event.kind };
      if (event.status !== undefined) entity.status = event.status;
      if (event.at !== undefined && isPlace(draft, event.at)) entity.at = event.at;
      if (event.desc !== undefined) entity.desc = event.desc;
      return put(entity);
    }
    case 'status': {
      const entity = findEntity(draft, event.id);
      if (!entity || entity.status === event.to) return false;
      return put({ ...entity, status: event.to });
    }
    case 'move': {
      const entity = findEntity(draft, event.id);
      if (!entity || entity.kind === 'place' || !isPlace(draft, event.to)) return false;
      // Something at a place is no longer in anyone's hands.
      const { holder: _holder, ...rest } = entity;
      return put({ ...rest, at: event.to });
    }
    case 'gain': {
      const item = findEntity(draft, event.item);
      if (!item || !findEntity(draft, event.holder) || event.holder === event.item) return false;
      // A held item goes where its holder goes; its own location no longer applies.
      const { at: _at, ...rest } = item;
      return put({ ...rest, holder: event.holder });
    }
    case 'lose': {
      const item = findEntity(draft, event.item);
      if (!item || item.holder !== event.holder) return false;
      const { holder: _holder, ...rest } = item;
      return put(rest);
    }
    case 'fact': {
      if (hasFact(draft, event.text)) return false;
      draft.facts.push(
        event.about ? { text: event.text, about: [...event.about] } : { text: event.text },
      );
      return true;
    }
    default:
      return false;
  }
}

/** Pure: the input is never changed, and an event that changes nothing returns it as is. */
export function evolve(state: NarrativeState, event: StateEvent): NarrativeState {
  const draft = draftOf(state);
  return evolveDraft(draft, event) ? draft : state;
}
