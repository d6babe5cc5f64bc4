// The rows other parts of Chronicle read instead of the log (the reconciler, accounts, budgets,
// the ledger), as a pure function of what a command just decided and the state it leaves. The
// command handler hands them to the event store, which writes them in the same statement as the
// events and the outbox: they can never disagree with the log, and no reader has to open an
// event's JSON (or know its schema versions) to answer "who owns this", "which turn is running"
// or "what did this user spend today".

import type { DecidedEvent } from './adventure-import.decider';
import type { AdventureState } from './adventure.state';
import { isRoomEvent, modelCallOf, turnRoleOf, type ModelCallRecord } from './event.catalogue';
import { membersAnsweredBy } from './room.payers';
import { currentMembers, type RoomRole } from './room.state';

/** A paid model call, with where it sits in the batch (1 = the batch's first event). */
export interface ModelCallRow extends ModelCallRecord {
  offset: number;
  userId: string;
  /** In a room: the members whose actions the call answered (room.payers.ts). */
  members?: string[];
}

export interface ReadModelRows {
  /** Set by the adventure's first event, and by a hand-over (or an import's reset): its owner. */
  owner?: string;
  /** The room's members after the batch, the host included, when it changed the room. */
  members?: { userId: string; role: RoomRole }[];
  /** Invite codes created by the batch (an imported one is another installation's: never). */
  invitesAdded?: string[];
  invitesRemoved?: string[];
  /**
   * The turn in flight after the batch, when the batch started or ended one: its id, or null
   * when none is (absent: the batch left it as it was).
   */
  turnInFlight?: string | null;
  modelCalls?: ModelCallRow[];
}

/** The turn in flight after `events`, when one of them starts or ends a turn (the catalogue's). */
export function turnInFlightAfter(
  events: readonly DecidedEvent[],
  state: AdventureState,
): string | null | undefined {
  if (!events.some((event) => turnRoleOf(event) !== null)) return undefined;
  return state.inFlight?.turnId ?? null;
}

/**
 * The model calls the batch paid for, charged to the adventure's owner; in a room, each names the
 * members whose actions it answered, by `before` (the state the batch was decided on). An
 * imported event is someone else's history, not this installation's spending (jobsAfter leaves
 * it alone too).
 */
export function modelCallsIn(
  events: readonly DecidedEvent[],
  state: AdventureState,
  before?: AdventureState,
): ModelCallRow[] {
  if (state.ownerId === null) return [];
  const rows: ModelCallRow[] = [];
  events.forEach((event, i) => {
    if (event.metadata?.importedFrom !== undefined) return;
    const call = modelCallOf(event);
    if (!call) return;
    const row: ModelCallRow = { ...call, offset: i + 1, userId: state.ownerId as string };
    const turnId = (event.data as { turnId?: unknown }).turnId;
    const members =
      before && membersAnsweredBy(before, typeof turnId === 'string' ? turnId : undefined);
    if (members) row.members = members;
    rows.push(row);
  });
  return rows;
}

/** The events after which the adventure's owner is (again) the one to write. */
const OWNER_EVENTS = new Set(['AdventureCreated', 'RoomHandedOver', 'RoomReset']);

/**
 * Who may open the adventure, and which codes lead to it: whenever the batch changed the room
 * (its creation included), every current member; the invites it created or removed.
 */
export function roomRowsAfter(
  events: readonly DecidedEvent[],
  state: AdventureState,
): Pick<ReadModelRows, 'members' | 'invitesAdded' | 'invitesRemoved'> {
  if (!events.some((event) => event.type === 'AdventureCreated' || isRoomEvent(event))) return {};
  const rows: Pick<ReadModelRows, 'members' | 'invitesAdded' | 'invitesRemoved'> = {
    members: currentMembers(state).map(({ userId, role }) => ({ userId, role })),
  };
  const added: string[] = [];
  const removed: string[] = [];
  for (const event of events) {
    if (event.type === 'InviteCreated' && event.metadata?.importedFrom === undefined) {
      added.push(event.data.code);
    }
    if (event.type === 'InviteRevoked') removed.push(event.data.code);
  }
  // A spent invite the fold pruned keeps its row: the join finds the adventure, whose projection
  // no longer holds the invite, and answers 404.
  if (added.length > 0) rows.invitesAdded = added;
  if (removed.length > 0) rows.invitesRemoved = removed;
  return rows;
}

/**
 * Every read model's rows after `events`, which left the adventure at `state` (decided on
 * `before`, when the caller has it: a room's model calls name their members by it).
 */
export function readModelsAfter(
  events: readonly DecidedEvent[],
  state: AdventureState,
  before?: AdventureState,
): ReadModelRows {
  const rows: ReadModelRows = {};
  if (state.ownerId !== null && events.some((event) => OWNER_EVENTS.has(event.type))) {
    rows.owner = state.ownerId;
  }
  Object.assign(rows, roomRowsAfter(events, state));
  const turn = turnInFlightAfter(events, state);
  if (turn !== undefined) rows.turnInFlight = turn;
  const calls = modelCallsIn(events, state, before);
  if (calls.length > 0) rows.modelCalls = calls;
  return rows;
}
