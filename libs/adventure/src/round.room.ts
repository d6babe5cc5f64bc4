// Who plays in a room, as the turn policies read it. The members are the room state's
// (rooms-members' room.state.ts); this reads them through the one shape the design fixes, so the
// policies do not depend on how the members' events are folded.

import type { AdventureState } from './adventure.state';
import type { TurnPolicy } from './round.state';

interface MemberView {
  userId: string;
  role: string;
  status: string;
}

function membersOf(state: AdventureState): readonly MemberView[] {
  const room = (state as { room?: { members?: MemberView[] } }).room;
  return room?.members ?? [];
}

/** The room's turn policy (a setting; `free` when the adventure has none). */
export function turnPolicyOf(state: AdventureState): TurnPolicy {
  const policy = (state.settings as { turnPolicy?: TurnPolicy }).turnPolicy;
  return policy ?? 'free';
}

/** The room's timeouts in seconds (settings; 0 = no timer). */
export function roomTimeoutsOf(state: AdventureState): { idle: number; round: number } {
  const settings = state.settings as { idleTimeoutSeconds?: number; roundTimeoutSeconds?: number };
  return { idle: settings.idleTimeoutSeconds ?? 0, round: settings.roundTimeoutSeconds ?? 0 };
}

/** True when someone besides the owner is a member: the turn policies apply. */
export function isRoomAdventure(state: AdventureState): boolean {
  return membersOf(state).some(
    (member) => member.userId !== state.ownerId && member.status !== 'left',
  );
}

/** The members who play (the host and the players, not gone), in join order. */
export function roomPlayersOf(state: AdventureState): string[] {
  return membersOf(state)
    .filter(
      (member) => (member.role === 'host' || member.role === 'player') && member.status !== 'left',
    )
    .map((member) => member.userId);
}

/** The player's role, or null when they are no member (or have left). */
export function roomRoleOf(state: AdventureState, userId: string): string | null {
  const member = membersOf(state).find((m) => m.userId === userId && m.status !== 'left');
  return member ? member.role : null;
}

/** Players the round does not wait for: marked away by the idle timeout, or away as members. */
export function awayPlayersOf(state: AdventureState): string[] {
  const away = new Set(state.turns.away);
  for (const member of membersOf(state)) if (member.status === 'away') away.add(member.userId);
  return roomPlayersOf(state).filter((userId) => away.has(userId));
}
