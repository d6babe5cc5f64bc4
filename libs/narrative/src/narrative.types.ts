// The contract of libs/narrative, shared with libs/context (which renders the
// state and the rejections) and libs/adventure (which folds accepted events,
// corrections and retcons into the state at a head). Keep these shapes stable:
// they are stored inside events (`Narrated.data.accepted/rejected`).

export type EntityKind = 'character' | 'place' | 'item' | 'faction' | 'other';

export interface Entity {
  id: string;
  name: string;
  kind: EntityKind;
  status?: string;
  /** id of the place where the entity is */
  at?: string;
  /** id of the entity holding this item ('player' is the protagonist) */
  holder?: string;
  desc?: string;
}

export interface Fact {
  text: string;
  about?: string[];
}

/** The authoritative narrative state: a plain JSON document. */
export interface NarrativeState {
  entities: Record<string, Entity>;
  facts: Fact[];
}

export type StateEvent =
  | {
      type: 'enter';
      id: string;
      name: string;
      kind: EntityKind;
      status?: string;
      at?: string;
      desc?: string;
    }
  | { type: 'status'; id: string; to: string }
  | { type: 'move'; id: string; to: string }
  | { type: 'gain'; holder: string; item: string }
  | { type: 'lose'; holder: string; item: string }
  | { type: 'fact'; text: string; about?: string[] };

export interface Rejection {
  /** the raw line (or array element) as the model wrote it */
  line: string;
  reason: string;
  /** what the model should do instead, in words it can act on */
  fix: string;
}

export interface ForbiddenStatusChange {
  from: string;
  to: string;
}

export interface Canon {
  rules: string[];
  forbiddenStatusChanges: ForbiddenStatusChange[];
}
