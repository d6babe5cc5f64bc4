// The room's facts (spec/multiplayer.md §3.1): invites, who joined, left or was kicked, roles,
// characters and hand-overs, on the adventure's own stream, so export, import and time travel
// carry them like any other event. Times are the decider's `now` (the caller's clock, as ids are
// the caller's), so a replay reads the same expiry it was decided with.

import type { Character, InviteRole, RoomRole } from './room.state';

export type InviteCreated = {
  type: 'InviteCreated';
  data: {
    code: string;
    role: InviteRole;
    maxUses: number | null;
    expiresAt: string | null;
    /** When it was created: the fold prunes the invites spent by then. */
    at: string;
  };
};
export type InviteRevoked = { type: 'InviteRevoked'; data: { code: string } };
export type MemberJoined = {
  type: 'MemberJoined';
  data: {
    userId: string;
    role: InviteRole;
    character: Character;
    /** The invite used (its uses go up by one). */
    inviteCode: string;
    at: string;
  };
};
export type MemberLeft = { type: 'MemberLeft'; data: { userId: string } };
/** The host removed a member; `banned`: they may not join again. */
export type MemberKicked = { type: 'MemberKicked'; data: { userId: string; banned: boolean } };
export type MemberRoleChanged = {
  type: 'MemberRoleChanged';
  data: { userId: string; role: InviteRole };
};
export type CharacterChanged = {
  type: 'CharacterChanged';
  data: { userId: string; character: Character };
};
/**
 * The room (and the adventure's ownership: who pays, who may retry) moves to `to`; the host until
 * then (`from`) stays, as a player.
 */
export type RoomHandedOver = { type: 'RoomHandedOver'; data: { from: string; to: string } };
/**
 * The room went back to its host alone: an import does this, since the members, bans and
 * invites of the exported adventure belong to the installation it came from.
 */
export type RoomReset = {
  type: 'RoomReset';
  data: { hostId: string; droppedMembers: string[]; droppedInvites: number; reason: 'import' };
};

export type RoomEvent =
  | InviteCreated
  | InviteRevoked
  | MemberJoined
  | MemberLeft
  | MemberKicked
  | MemberRoleChanged
  | CharacterChanged
  | RoomHandedOver
  | RoomReset;
export type RoomEventType = RoomEvent['type'];

export const ROOM_ROLES: readonly RoomRole[] = ['host', 'player', 'spectator'];
export const INVITE_ROLES: readonly InviteRole[] = ['player', 'spectator'];
