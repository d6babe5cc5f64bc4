import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import {
  ForbiddenError,
  NotFoundError,
  currentMembers,
  memberOf,
  type AdventureState,
  type RoomCommand,
  type RoomInvite,
  type RoomMember,
} from '@chronicle/adventure';
import { AdventureOwners } from '@chronicle/accounts';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { requestMetadata } from '../http/request-actor';
import type { ChangeMemberDto, CreateInviteDto, JoinRoomDto } from './room.dto';

// The room routes (spec/multiplayer.md §3.8): each is a room command decided by libs/adventure's
// room decider and appended to the adventure's stream. The access guard has already held the
// caller to their role; what is left here is who a member route is about (the host may manage
// anyone, a member only themselves).

/** The join route of an invite: the link the host hands out. */
export function inviteUrl(code: string): string {
  return `/v1/invites/${code}/join`;
}

/** 144 random bits, URL-safe: the code is the only secret between an invite and a join. */
export function newInviteCode(): string {
  return randomBytes(18).toString('base64url');
}

function memberView(member: RoomMember) {
  const { userId, role, character, status } = member;
  return { userId, role, character, status };
}

function inviteView(invite: RoomInvite) {
  const { code, role, maxUses, uses, expiresAt } = invite;
  return { code, url: inviteUrl(code), role, maxUses, uses, expiresAt };
}

@Injectable()
export class RoomsUseCase {
  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly owners: AdventureOwners,
  ) {}

  private run(adventureId: string, command: RoomCommand) {
    return this.adventures.handle(adventureId, command, requestMetadata());
  }

  async createInvite(adventureId: string, body: CreateInviteDto) {
    const code = newInviteCode();
    const { state } = await this.run(adventureId, {
      type: 'CreateInvite',
      data: {
        code,
        role: body.role,
        maxUses: body.maxUses ?? null,
        expiresInSeconds: body.expiresInSeconds ?? null,
        now: new Date().toISOString(),
      },
    });
    const invite = state.room.invites.find((candidate) => candidate.code === code);
    return inviteView(invite as RoomInvite);
  }

  async invites(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    return { invites: state.room.invites.map(inviteView) };
  }

  async revokeInvite(adventureId: string, code: string) {
    await this.run(adventureId, { type: 'RevokeInvite', data: { code } });
    return { code, revoked: true };
  }

  /** Joins the invite's room; `created` is false when the caller was already a member. */
  async join(code: string, userId: string, body: JoinRoomDto) {
    const adventureId = await this.owners.adventureOfInvite(code);
    if (adventureId === null) {
      throw new NotFoundError('invite not found: check the code, or ask the host for a new one');
    }
    const { state, events } = await this.run(adventureId, {
      type: 'JoinRoom',
      data: { code, userId, character: body.character, now: new Date().toISOString() },
    });
    const member = memberOf(state, userId) as RoomMember;
    return {
      created: events.length > 0,
      membership: { adventureId, userId, role: member.role },
    };
  }

  async members(adventureId: string) {
    const state = await this.adventures.get(adventureId);
    return { members: currentMembers(state).map(memberView), version: state.version };
  }

  async changeMember(adventureId: string, callerId: string, userId: string, body: ChangeMemberDto) {
    const host = await this.hostOf(adventureId);
    if (body.role !== undefined && callerId !== host) {
      throw new ForbiddenError("only the host changes a member's role");
    }
    if (body.character !== undefined && callerId !== userId) {
      throw new ForbiddenError('a character is changed by its own player');
    }
    let state: AdventureState | null = null;
    if (body.character !== undefined) {
      ({ state } = await this.run(adventureId, {
        type: 'ChangeCharacter',
        data: { userId, character: body.character },
      }));
    }
    if (body.role !== undefined) {
      ({ state } = await this.run(
        adventureId,
        body.role === 'host'
          ? { type: 'HandOverRoom', data: { userId } }
          : { type: 'ChangeMemberRole', data: { userId, role: body.role } },
      ));
    }
    state ??= await this.adventures.get(adventureId);
    const member = memberOf(state, userId);
    if (!member) throw new NotFoundError(`user ${userId} is not a member of this adventure`);
    return memberView(member);
  }

  /** The host kicks (and may ban) anyone but themselves; a member removes only themselves. */
  async removeMember(adventureId: string, callerId: string, userId: string, ban: boolean) {
    const host = await this.hostOf(adventureId);
    const command: RoomCommand =
      callerId === userId
        ? { type: 'LeaveRoom', data: { userId } }
        : { type: 'KickMember', data: { userId, ban } };
    if (callerId === userId && ban) {
      throw new ForbiddenError('ban=true is for kicking another member; to leave, send no ban');
    }
    if (command.type === 'KickMember' && callerId !== host) {
      throw new ForbiddenError('only the host removes another member');
    }
    await this.run(adventureId, command);
    return { userId, removed: true, banned: command.type === 'KickMember' && ban };
  }

  private async hostOf(adventureId: string): Promise<string | null> {
    return (await this.adventures.get(adventureId)).ownerId;
  }
}
