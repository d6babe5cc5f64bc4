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

/** What `parseReply` makes of one model reply. */
export interface ParsedReply {
  /** the reply with every `state` block removed and whitespace trimmed: what history stores */
  narration: string;
  /** well-formed candidate events of the last `state` block, for the referee */
  events: StateEvent[];
  /** lines of that block that could not become events, each with a fix */
  rejections: Rejection[];
  /**
   * The reply holds no narration (it was only a block, or nothing at all). The turn fails and
   * is retried; an empty narration is never stored.
   */
  onlyBlock: boolean;
  /** the last `state` block had no closing fence (the output cap cut it off) */
  truncated: boolean;
}

/** What the referee makes of a block's candidate events. */
export interface RefereeVerdict {
  /** the events to apply, in order; `evolve` folds them */
  accepted: StateEvent[];
  rejected: Rejection[];
}

/**
 * A player's correction: sets part of the state directly. Plain JSON, stored in the adventure's
 * stream and folded after the accepted events of the turn at which it was made. Canon does not
 * bind the player; referential integrity does (a place must exist before something is moved
 * there).
 */
export type Correction =
  | { op: 'rename'; id: string; name: string }
  /** `null` clears the status */
  | { op: 'setStatus'; id: string; status: string | null }
  /** `to` is a place id; `null` clears the location */
  | { op: 'move'; id: string; to: string | null }
  /** `holder` is an entity id or `player`; `null` means nobody holds the item */
  | { op: 'setHolder'; item: string; holder: string | null }
  /** `null` clears the description */
  | { op: 'setDesc'; id: string; desc: string | null }
  | { op: 'addEntity'; entity: Entity }
  /** also clears every reference to it (things at it, items it holds, facts about it) */
  | { op: 'removeEntity'; id: string }
  | { op: 'addFact'; text: string; about?: string[] }
  /** removes the fact whose text matches (trimmed, case-insensitive) */
  | { op: 'removeFact'; text: string };

/**
 * One turn on the story path as the narrative fold sees it: the events the referee accepted,
 * the indexes (into `accepted`) of those later withdrawn by a retcon, and the corrections the
 * player made while this turn was the head.
 */
export interface NarrativeTurn {
  accepted: StateEvent[];
  retconned?: number[];
  corrections?: Correction[];
}
