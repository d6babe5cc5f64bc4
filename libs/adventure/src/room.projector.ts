// Folds the room events into `room` (and `ownerId`, which a hand-over moves). A function of plain
// values shared by the fast projector and the plain evolve: it only ever replaces `room` and
// `ownerId` with new values, so a draft whose containers are shared stays unchanged underneath.

import type { AdventureState } from './adventure.state';
import type { RoomEvent } from './room.events';
import { inviteSpent, roomOfOwner, type RoomMember, type RoomState } from './room.state';

type RoomHolder = Pick<AdventureState, 'room' | 'ownerId'>;

function withMember(
  room: RoomState,
  userId: string,
  change: (member: RoomMember) => RoomMember,
): RoomState {
  return {
    ...room,
    members: room.members.map((member) => (member.userId === userId ? change(member) : member)),
  };
}

// eslint-disable-next-line max-lines-per-function -- one switch over the room's events, so what each does is read in one place
export function evolveRoom(draft: RoomHolder, event: RoomEvent): void {
  const { room } = draft;
  switch (event.type) {
    case 'InviteCreated': {
      const { code, role, maxUses, expiresAt, at } = event.data;
      // Spent invites go when a new one comes: the list stays bounded by the live ones.
      const kept = room.invites.filter((invite) => inviteSpent(invite, at) === null);
      draft.room = {
        ...room,
        invites: [...kept, { code, role, maxUses, uses: 0, expiresAt, createdAt: at }],
      };
      return;
    }
    case 'InviteRevoked':
      draft.room = {
        ...room,
        invites: room.invites.filter((invite) => invite.code !== event.data.code),
      };
      return;
    case 'MemberJoined': {
      const { userId, role, character, inviteCode } = event.data;
      draft.room = {
        ...room,
        // Someone who left and comes back joins at the end, as a new member.
        members: [
          ...room.members.filter((member) => member.userId !== userId),
          { userId, role, character, status: 'active' },
        ],
        invites: room.invites.map((invite) =>
          invite.code === inviteCode ? { ...invite, uses: invite.uses + 1 } : invite,
        ),
      };
      return;
    }
    case 'MemberLeft':
      draft.room = withMember(room, event.data.userId, (m) => ({ ...m, status: 'left' }));
      return;
    case 'MemberKicked': {
      const { userId, banned } = event.data;
      const next = withMember(room, userId, (m) => ({ ...m, status: 'left' }));
      draft.room =
        banned && !room.banned.includes(userId)
          ? { ...next, banned: [...room.banned, userId] }
          : next;
      return;
    }
    case 'MemberRoleChanged':
      draft.room = withMember(room, event.data.userId, (m) => ({ ...m, role: event.data.role }));
      return;
    case 'CharacterChanged':
      draft.room = withMember(room, event.data.userId, (m) => ({
        ...m,
        character: event.data.character,
      }));
      return;
    case 'RoomHandedOver': {
      // The host then steps down, whoever the log's `from` names: an import renames the first
      // owner in AdventureCreated, not in the events after it.
      const { to } = event.data;
      const from = draft.ownerId;
      const members = room.members.map((member): RoomMember => {
        if (member.userId === to) return { ...member, role: 'host', status: 'active' };
        if (member.userId === from) return { ...member, role: 'player' };
        return member;
      });
      // The host first: the new one leads the list, the others keep their order.
      draft.room = {
        ...room,
        members: [
          ...members.filter((member) => member.userId === to),
          ...members.filter((member) => member.userId !== to),
        ],
      };
      draft.ownerId = to;
      return;
    }
    case 'RoomReset': {
      const { hostId } = event.data;
      const host = room.members.find((member) => member.userId === hostId);
      const fresh = roomOfOwner(hostId);
      if (host?.character) fresh.members[0].character = host.character;
      draft.room = fresh;
      draft.ownerId = hostId;
      return;
    }
  }
}
