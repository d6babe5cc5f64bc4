// The rows other parts of Chronicle read instead of the log (the reconciler, accounts, budgets,
// the ledger), as a pure function of what a command just decided and the state it leaves. The
// command handler hands them to the event store, which writes them in the same statement as the
// events and the outbox: they can never disagree with the log, and no reader has to open an
// event's JSON (or know its schema versions) to answer "who owns this", "which turn is running"
// or "what did this user spend today".

import type { DecidedEvent } from './adventure-import.decider';
import type { AdventureState } from './adventure.state';
import { modelCallOf, turnRoleOf, type ModelCallRecord } from './event.catalogue';
import { membersAnsweredBy } from './room.payers';

/** A paid model call, with where it sits in the batch (1 = the batch's first event). */
export interface ModelCallRow extends ModelCallRecord {
  offset: number;
  userId: string;
  /** In a room: the members whose actions the call answered (room.payers.ts). */
  members?: string[];
}

export interface ReadModelRows {
  /** Set by the adventure's first event: its owner. */
  owner?: string;
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
  if (state.ownerId !== null && events.some((event) => event.type === 'AdventureCreated')) {
    rows.owner = state.ownerId;
  }
  const turn = turnInFlightAfter(events, state);
  if (turn !== undefined) rows.turnInFlight = turn;
  const calls = modelCallsIn(events, state, before);
  if (calls.length > 0) rows.modelCalls = calls;
  return rows;
}
