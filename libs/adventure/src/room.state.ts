// A room: the people who share one adventure (spec/multiplayer.md §3.1). Every adventure has
// one from its creation, holding its owner as the host; it is a room in the players' sense once
// anyone else joins (`isRoom`). The owner (`AdventureState.ownerId`) is always the host member,
// and a hand-over moves both together. Plain JSON, like the rest of the projection.

import type { AdventureState } from './adventure.state';

export type RoomRole = 'host' | 'player' | 'spectator';
/** The roles an invite may give: the host's is handed over, never invited. */
export type InviteRole = Exclude<RoomRole, 'host'>;
/** `away`: idle for a round (rooms' turn policies); `left`: left or was kicked, kept for the record. */
export type MemberStatus = 'active' | 'away' | 'left';

/** A player's character. `pronouns` as a persona's: "she/her", "he/him", "they/them"; "" reads as they. */
export interface Character {
  name: string;
  pronouns: string;
  description: string;
}

export interface RoomMember {
  userId: string;
  role: RoomRole;
  /** null until the member picks one (the host starts without; the persona stands in for them). */
  character: Character | null;
  status: MemberStatus;
}

export interface RoomInvite {
  /** Unguessable (the API draws it): whoever holds it may join, so it is the secret. */
  code: string;
  role: InviteRole;
  /** null: no cap. */
  maxUses: number | null;
  uses: number;
  /** ISO time; null: never expires. */
  expiresAt: string | null;
  createdAt: string;
}

export interface RoomState {
  /** Join order, the host first; members who left stay with status `left`. */
  members: RoomMember[];
  /** Live and spent invites, oldest first; revoked ones are gone, spent ones pruned (see the fold). */
  invites: RoomInvite[];
  /** User ids the host kicked with a ban: they cannot join again. */
  banned: string[];
}

/** Before the adventure exists. */
export function emptyRoom(): RoomState {
  return { members: [], invites: [], banned: [] };
}

/** A new adventure's room: its owner, as the host. */
export function roomOfOwner(ownerId: string): RoomState {
  return {
    members: [{ userId: ownerId, role: 'host', character: null, status: 'active' }],
    invites: [],
    banned: [],
  };
}

type WithRoom = Pick<AdventureState, 'room'>;

/** The member `userId` is now (active or away), or null: never joined, left, or kicked. */
export function memberOf(state: WithRoom, userId: string): RoomMember | null {
  return state.room.members.find((m) => m.userId === userId && m.status !== 'left') ?? null;
}

/** The members present (active or away), in join order, the host first. */
export function currentMembers(state: WithRoom): RoomMember[] {
  return state.room.members.filter((m) => m.status !== 'left');
}

/** More than the owner: someone joined and is still a member. A one-player adventure is not. */
export function isRoom(state: WithRoom): boolean {
  return currentMembers(state).length > 1;
}

/** Who may act now: the host and the players whose status is `active`, in join order. */
export function activePlayers(state: WithRoom): RoomMember[] {
  return state.room.members.filter(
    (m) => (m.role === 'host' || m.role === 'player') && m.status === 'active',
  );
}

/**
 * The active players' characters, in join order. A host with no character of their own plays
 * the adventure's persona (as in a one-player adventure); any other member without one, and a
 * persona with no name, is left out: there is no name to write.
 */
export function charactersOf(
  state: WithRoom & Pick<AdventureState, 'fields'>,
): Array<{ userId: string; character: Character }> {
  const characters: Array<{ userId: string; character: Character }> = [];
  for (const member of activePlayers(state)) {
    const character =
      member.character ?? (member.role === 'host' ? { ...state.fields.persona } : null);
    if (character && character.name.trim() !== '') {
      characters.push({ userId: member.userId, character });
    }
  }
  return characters;
}

/** An invite that can no longer be used at `now` (ISO): why, or null when it still can. */
export function inviteSpent(invite: RoomInvite, now: string): 'expired' | 'used up' | null {
  if (invite.expiresAt !== null && Date.parse(invite.expiresAt) <= Date.parse(now)) {
    return 'expired';
  }
  if (invite.maxUses !== null && invite.uses >= invite.maxUses) return 'used up';
  return null;
}
