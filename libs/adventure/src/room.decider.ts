// What a room command appends (spec/multiplayer.md §3.1): the rules of invites, joining, leaving,
// kicks, bans, roles, characters and hand-overs, in one place. Pure: ids (invite codes) and the
// time (`now`, ISO) come from the caller. Who may send which command (the host, or a member for
// themselves) is the API's access check; what a command may do to the room is decided here.

import {
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidCommandError,
  LimitExceededError,
  NotFoundError,
} from './adventure.errors';
import { LIMITS } from './adventure.limits';
import type { AdventureState } from './adventure.state';
import { checkId, checkText } from './adventure.validation';
import { INVITE_ROLES, type RoomEvent } from './room.events';
import {
  currentMembers,
  inviteSpent,
  memberOf,
  type Character,
  type InviteRole,
  type RoomMember,
} from './room.state';

/** A character as a request gives it: only the name is required. */
export type CharacterInput = { name?: unknown; pronouns?: unknown; description?: unknown };

export type RoomCommand =
  | {
      type: 'CreateInvite';
      data: {
        code: string;
        role: InviteRole;
        maxUses?: number | null;
        expiresInSeconds?: number | null;
        now: string;
      };
    }
  | { type: 'RevokeInvite'; data: { code: string } }
  | {
      type: 'JoinRoom';
      data: { code: string; userId: string; character: CharacterInput; now: string };
    }
  | { type: 'LeaveRoom'; data: { userId: string } }
  | { type: 'KickMember'; data: { userId: string; ban?: boolean } }
  | { type: 'ChangeMemberRole'; data: { userId: string; role: string } }
  | { type: 'ChangeCharacter'; data: { userId: string; character: CharacterInput } }
  | { type: 'HandOverRoom'; data: { userId: string } };

const ROOM_COMMANDS: ReadonlySet<string> = new Set<RoomCommand['type']>([
  'CreateInvite',
  'RevokeInvite',
  'JoinRoom',
  'LeaveRoom',
  'KickMember',
  'ChangeMemberRole',
  'ChangeCharacter',
  'HandOverRoom',
]);

export function isRoomCommand(command: { type: string }): command is RoomCommand {
  return ROOM_COMMANDS.has(command.type);
}

function invalid(message: string): never {
  throw new InvalidCommandError(message);
}

export function checkInviteRole(role: unknown): InviteRole {
  if (role === 'host') {
    invalid('role "host" is not given by an invite or a role change: hand the room over instead');
  }
  if (!INVITE_ROLES.includes(role as InviteRole)) {
    invalid(`role must be "player" or "spectator"; got ${JSON.stringify(role)}`);
  }
  return role as InviteRole;
}

/** A character as stored: the name is required (it is how the story names the player). */
export function checkCharacter(value: unknown): Character {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    invalid('character must be an object: {name, pronouns?, description?}');
  }
  const input = value as CharacterInput;
  return {
    name: checkText('character.name', input.name, {
      max: LIMITS.personaNameChars,
      required: true,
    }).trim(),
    pronouns: checkText('character.pronouns', input.pronouns ?? '', {
      max: LIMITS.personaPronounsChars,
    }).trim(),
    description: checkText('character.description', input.description ?? ''),
  };
}

/** An ISO time from the caller; a bad one is a bug of the caller's, refused rather than stored. */
export function checkTime(field: string, value: unknown): string {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    invalid(`${field} must be an ISO time`);
  }
  return new Date(Date.parse(value)).toISOString();
}

function optionalWhole(field: string, value: unknown, min: number, max: number): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    invalid(`${field} must be a whole number from ${min} to ${max}, or left out for no limit`);
  }
  return value;
}

function requireMember(state: AdventureState, userId: string): RoomMember {
  const member = memberOf(state, userId);
  if (!member) throw new NotFoundError(`user ${userId} is not a member of this adventure`);
  return member;
}

function sameCharacter(a: Character | null, b: Character): boolean {
  return (
    a !== null && a.name === b.name && a.pronouns === b.pronouns && a.description === b.description
  );
}

// eslint-disable-next-line max-lines-per-function -- one switch over the room's commands, so each rule is read beside the others
export function decideRoom(command: RoomCommand, state: AdventureState): RoomEvent[] {
  if (state.id === null) throw new NotFoundError('adventure not found; create it first');
  const { room } = state;
  switch (command.type) {
    case 'CreateInvite': {
      const d = command.data;
      const code = checkId('code', d.code);
      const role = checkInviteRole(d.role);
      const now = checkTime('now', d.now);
      const maxUses = optionalWhole('maxUses', d.maxUses, 1, LIMITS.inviteMaxUses);
      const lifetime = optionalWhole(
        'expiresInSeconds',
        d.expiresInSeconds,
        1,
        LIMITS.inviteLifetimeSeconds,
      );
      if (room.invites.some((invite) => invite.code === code)) {
        throw new ConflictError(`invite ${code} already exists; send a new code`);
      }
      const live = room.invites.filter((invite) => inviteSpent(invite, now) === null);
      if (live.length >= LIMITS.invitesPerAdventure) {
        throw new LimitExceededError(
          `an adventure holds at most ${LIMITS.invitesPerAdventure} live invites (limit invitesPerAdventure); revoke one first`,
        );
      }
      const expiresAt =
        lifetime === null ? null : new Date(Date.parse(now) + lifetime * 1000).toISOString();
      return [{ type: 'InviteCreated', data: { code, role, maxUses, expiresAt, at: now } }];
    }

    case 'RevokeInvite': {
      const { code } = command.data;
      if (!room.invites.some((invite) => invite.code === code)) {
        throw new NotFoundError(`invite ${code} not found in this adventure`);
      }
      return [{ type: 'InviteRevoked', data: { code } }];
    }

    case 'JoinRoom': {
      const d = command.data;
      const userId = checkId('userId', d.userId);
      const now = checkTime('now', d.now);
      const invite = room.invites.find((candidate) => candidate.code === d.code);
      if (!invite)
        throw new NotFoundError(
          'invite not found: it was revoked, or it expired or was used up and has been cleared',
        );
      // Already in: the join is answered with the membership, whatever the invite's state.
      if (memberOf(state, userId)) return [];
      if (room.banned.includes(userId)) {
        throw new ForbiddenError('you were banned from this room by its host; you cannot join');
      }
      const spent = inviteSpent(invite, now);
      if (spent) {
        throw new GoneError(
          spent === 'expired'
            ? `this invite expired at ${invite.expiresAt}; ask the host for a new one`
            : `this invite was used ${invite.uses} times, its limit; ask the host for a new one`,
        );
      }
      if (currentMembers(state).length >= LIMITS.membersPerRoom) {
        throw new LimitExceededError(
          `a room holds at most ${LIMITS.membersPerRoom} members (limit membersPerRoom)`,
        );
      }
      const character = checkCharacter(d.character);
      return [
        {
          type: 'MemberJoined',
          data: { userId, role: invite.role, character, inviteCode: invite.code, at: now },
        },
      ];
    }

    case 'LeaveRoom': {
      const member = requireMember(state, command.data.userId);
      if (member.role === 'host') {
        throw new ConflictError(
          'the host cannot leave the room; hand it over to another member first',
        );
      }
      return [{ type: 'MemberLeft', data: { userId: member.userId } }];
    }

    case 'KickMember': {
      const { userId } = command.data;
      const ban = command.data.ban === true;
      const member = memberOf(state, userId);
      if (member?.role === 'host') throw new ConflictError('the host cannot be kicked');
      if (!member) {
        // A former member may still be banned, so the link they kept no longer lets them in.
        const former = room.members.some((m) => m.userId === userId);
        if (ban && former && !room.banned.includes(userId)) {
          return [{ type: 'MemberKicked', data: { userId, banned: true } }];
        }
        if (former) return [];
        throw new NotFoundError(`user ${userId} is not a member of this adventure`);
      }
      return [{ type: 'MemberKicked', data: { userId, banned: ban } }];
    }

    case 'ChangeMemberRole': {
      const role = checkInviteRole(command.data.role);
      const member = requireMember(state, command.data.userId);
      if (member.role === 'host') {
        throw new ConflictError("the host's role changes only by a hand-over to another member");
      }
      if (member.role === role) return [];
      return [{ type: 'MemberRoleChanged', data: { userId: member.userId, role } }];
    }

    case 'ChangeCharacter': {
      const member = requireMember(state, command.data.userId);
      const character = checkCharacter(command.data.character);
      if (sameCharacter(member.character, character)) return [];
      return [{ type: 'CharacterChanged', data: { userId: member.userId, character } }];
    }

    case 'HandOverRoom': {
      const member = requireMember(state, command.data.userId);
      if (member.role === 'host') return [];
      return [
        { type: 'RoomHandedOver', data: { from: state.ownerId as string, to: member.userId } },
      ];
    }

    default: {
      const unknown: { type: string } = command;
      throw new InvalidCommandError(`unknown command ${JSON.stringify(unknown.type)}`);
    }
  }
}
