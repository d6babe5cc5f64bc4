// Who pays in a room (spec/multiplayer.md §3.5), in one place. Every model call is charged to the
// host's daily budget (the adventure's owner when it is appended: model_calls.user_id); in a room
// the call also names the members whose actions it answered (model_calls.members), split evenly
// among them when summed, which the per-player daily cap (`perPlayerDailyTokens`) and the ledger's
// by-member grouping read. A call that answered no member's action (a memory pass, a summary) has
// no members: the host's alone.

import type { AdventureState } from './adventure.state';
import { isRoom } from './room.state';

/**
 * The members a call made for `turnId` answers, by the state before the call was recorded (the
 * turn is in flight there); null outside a room or for a call of no turn in flight. They are the
 * senders of the actions the turn answers (`inFlight.actionIds`, each sender in `turns.actors`),
 * each once, in the order they acted; a continue or a retry (no action of a player) is the host's.
 */
export function membersAnsweredBy(
  before: AdventureState,
  turnId: string | undefined,
): string[] | null {
  if (turnId === undefined || !isRoom(before) || before.ownerId === null) return null;
  const inFlight = before.inFlight;
  if (inFlight?.turnId !== turnId) return null;
  const senders = inFlight.actionIds.map((id) => before.turns.actors[id] ?? before.ownerId);
  const members = [...new Set(senders.filter((id): id is string => id !== null))];
  return members.length > 0 ? members : [before.ownerId];
}

/** What a player's own model tokens in a room today are held to; null when nothing holds them. */
export function playerDailyCap(state: AdventureState, userId: string): number | null {
  const cap = state.settings.perPlayerDailyTokens;
  if (!(cap > 0) || !isRoom(state) || userId === state.ownerId) return null;
  return cap;
}
