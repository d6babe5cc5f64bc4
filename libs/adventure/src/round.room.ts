// Who plays in a room, as the turn policies read it: the room state's members (room.state.ts)
// and its settings (room.settings.ts).

import type { TurnPolicy } from './adventure.events';
import type { AdventureState } from './adventure.state';
import { currentMembers, isRoom, memberOf } from './room.state';

/** The room's turn policy (a setting; `free` by default). */
export function turnPolicyOf(state: AdventureState): TurnPolicy {
  return state.settings.turnPolicy ?? 'free';
}

/** The room's timeouts in seconds (settings; 0 = no timer). */
export function roomTimeoutsOf(state: AdventureState): { idle: number; round: number } {
  return {
    idle: state.settings.idleTimeoutSeconds ?? 0,
    round: state.settings.roundTimeoutSeconds ?? 0,
  };
}

/** True when someone besides the owner is a member: the turn policies apply. */
export function isRoomAdventure(state: AdventureState): boolean {
  return isRoom(state);
}

/** The members who play (the host and the players, not gone), in join order. */
export function roomPlayersOf(state: AdventureState): string[] {
  return currentMembers(state)
    .filter((member) => member.role === 'host' || member.role === 'player')
    .map((member) => member.userId);
}

/** The member's role, or null when they are no member (or have left). */
export function roomRoleOf(state: AdventureState, userId: string): string | null {
  return memberOf(state, userId)?.role ?? null;
}

/** Players the round does not wait for: marked away by the idle timeout, or away as members. */
export function awayPlayersOf(state: AdventureState): string[] {
  const away = new Set(state.turns.away);
  for (const member of currentMembers(state)) if (member.status === 'away') away.add(member.userId);
  return roomPlayersOf(state).filter((userId) => away.has(userId));
}
