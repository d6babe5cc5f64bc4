import { plainProject } from './adventure.evolve';
import {
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidCommandError,
  LimitExceededError,
  NotFoundError,
} from './adventure.errors';
import { LIMITS } from './adventure.limits';
import { decide } from './adventure.decider';
import { checkRecordedEvent } from './event.validation';
import type { RoomCommand } from './room.decider';
import { activePlayers, charactersOf, isRoom, memberOf } from './room.state';
import { AdventureHistory, plainView, wordCountTokens } from './testing';
import { given } from './testing/decider.given';

const T0 = '2026-12-06T03:00:00.000Z';
const mira = { name: 'Mira', pronouns: 'she/her', description: 'A smith.' };

function invite(history: AdventureHistory, code = 'code-1', over: Record<string, unknown> = {}) {
  history.run({
    type: 'CreateInvite',
    data: { code, role: 'player', now: T0, ...over },
  } as RoomCommand);
  return code;
}
function join(history: AdventureHistory, userId: string, code = 'code-1', now = T0) {
  return history.run({
    type: 'JoinRoom',
    data: { code, userId, character: { ...mira, name: `${userId}-char` }, now },
  });
}
function room(...joiners: string[]) {
  const history = AdventureHistory.create();
  invite(history);
  for (const userId of joiners) join(history, userId);
  return history;
}

describe('decideRoom: invites', () => {
  it('given a new adventure, then its room holds the owner alone, as the host, and is no room yet', () => {
    const { state } = AdventureHistory.create();
    expect(state.room.members).toEqual([
      { userId: 'owner-1', role: 'host', character: null, status: 'active' },
    ]);
    expect(isRoom(state)).toBe(false);
  });

  it('given an adventure, when the host creates an invite with uses and a lifetime, then InviteCreated with its expiry', () => {
    given(AdventureHistory.create())
      .when({
        type: 'CreateInvite',
        data: { code: 'c', role: 'spectator', maxUses: 2, expiresInSeconds: 60, now: T0 },
      })
      .then([
        {
          type: 'InviteCreated',
          data: {
            code: 'c',
            role: 'spectator',
            maxUses: 2,
            expiresAt: '2026-12-06T03:01:00.000Z',
            at: T0,
          },
        },
      ]);
  });

  it('given an invite, when one asks for role host, a bad maxUses or the same code, then refused', () => {
    const history = room();
    const create = (data: Record<string, unknown>) =>
      given(history).when({
        type: 'CreateInvite',
        data: { code: 'c-2', role: 'player', now: T0, ...data },
      } as RoomCommand);
    create({ role: 'host' }).thenThrows(InvalidCommandError, 'invalid', /hand the room over/);
    create({ maxUses: 0 }).thenThrows(InvalidCommandError, 'invalid', /maxUses/);
    create({ code: 'code-1' }).thenThrows(ConflictError, 'conflict', /already exists/);
  });

  it('given invitesPerAdventure live invites, when one more is created, then LimitExceeded', () => {
    const history = AdventureHistory.create();
    for (let i = 0; i < LIMITS.invitesPerAdventure; i++) invite(history, `c-${i}`);
    given(history)
      .when({ type: 'CreateInvite', data: { code: 'one-more', role: 'player', now: T0 } })
      .thenThrows(LimitExceededError, 'limit', /invitesPerAdventure/);
  });

  it('given an invite, when revoked, then it is gone and a join with it is 404', () => {
    const history = room();
    history.run({ type: 'RevokeInvite', data: { code: 'code-1' } });
    expect(history.state.room.invites).toEqual([]);
    given(history)
      .when({
        type: 'JoinRoom',
        data: { code: 'code-1', userId: 'u2', character: mira, now: T0 },
      })
      .thenThrows(NotFoundError, 'not_found', /revoked/);
  });
});

describe('decideRoom: joining', () => {
  it('given an invite, when a user joins with a character, then MemberJoined with the invite role and its uses go up', () => {
    const history = room();
    const [joined] = join(history, 'u2');
    expect(joined).toMatchObject({
      type: 'MemberJoined',
      data: { userId: 'u2', role: 'player', inviteCode: 'code-1', at: T0 },
    });
    expect(memberOf(history.state, 'u2')).toMatchObject({ role: 'player', status: 'active' });
    expect(history.state.room.invites[0].uses).toBe(1);
    expect(isRoom(history.state)).toBe(true);
    expect(activePlayers(history.state).map((m) => m.userId)).toEqual(['owner-1', 'u2']);
  });

  it('given a member, when they join again, then nothing is appended', () => {
    given(room('u2'))
      .when({ type: 'JoinRoom', data: { code: 'code-1', userId: 'u2', character: mira, now: T0 } })
      .then([]);
  });

  it('given an invite that expired, when a user joins, then Gone naming the expiry', () => {
    const history = AdventureHistory.create();
    invite(history, 'code-1', { expiresInSeconds: 60 });
    given(history)
      .when({
        type: 'JoinRoom',
        data: { code: 'code-1', userId: 'u2', character: mira, now: '2026-12-06T03:01:00.000Z' },
      })
      .thenThrows(GoneError, 'gone', /expired at 2026-12-06T03:01:00.000Z/);
  });

  it('given an invite of one use that was used, when another user joins, then Gone: used up', () => {
    const history = AdventureHistory.create();
    invite(history, 'code-1', { maxUses: 1 });
    join(history, 'u2');
    given(history)
      .when({ type: 'JoinRoom', data: { code: 'code-1', userId: 'u3', character: mira, now: T0 } })
      .thenThrows(GoneError, 'gone', /used 1 times/);
  });

  it('given a join without a character name, then refused naming character.name', () => {
    given(room())
      .when({ type: 'JoinRoom', data: { code: 'code-1', userId: 'u2', character: {}, now: T0 } })
      .thenThrows(InvalidCommandError, 'invalid', /character\.name/);
  });

  it('given a banned user, when they join with a fresh invite, then Forbidden', () => {
    const history = room('u2');
    history.run({ type: 'KickMember', data: { userId: 'u2', ban: true } });
    invite(history, 'code-2');
    given(history)
      .when({ type: 'JoinRoom', data: { code: 'code-2', userId: 'u2', character: mira, now: T0 } })
      .thenThrows(ForbiddenError, 'forbidden', /banned/);
  });

  it('given a member who was kicked without a ban, when they join again, then they are back, last', () => {
    const history = room('u2', 'u3');
    history.run({ type: 'KickMember', data: { userId: 'u2' } });
    expect(memberOf(history.state, 'u2')).toBeNull();
    join(history, 'u2');
    expect(history.state.room.members.map((m) => m.userId)).toEqual(['owner-1', 'u3', 'u2']);
  });
});

describe('decideRoom: members', () => {
  it('given a player, when they leave, then MemberLeft and they are no member', () => {
    const history = room('u2');
    given(history)
      .when({ type: 'LeaveRoom', data: { userId: 'u2' } })
      .then([{ type: 'MemberLeft', data: { userId: 'u2' } }]);
    history.run({ type: 'LeaveRoom', data: { userId: 'u2' } });
    expect(memberOf(history.state, 'u2')).toBeNull();
    expect(history.state.room.members[1].status).toBe('left');
  });

  it('given the host, when they leave or are kicked or their role changes, then refused', () => {
    const history = room('u2');
    given(history)
      .when({ type: 'LeaveRoom', data: { userId: 'owner-1' } })
      .thenThrows(ConflictError, 'conflict', /hand it over/);
    given(history)
      .when({ type: 'KickMember', data: { userId: 'owner-1' } })
      .thenThrows(ConflictError, 'conflict', /cannot be kicked/);
    given(history)
      .when({ type: 'ChangeMemberRole', data: { userId: 'owner-1', role: 'spectator' } })
      .thenThrows(ConflictError, 'conflict', /hand-over/);
  });

  it('given a player, when the host makes them a spectator, then MemberRoleChanged; the same role again appends nothing', () => {
    const history = room('u2');
    given(history)
      .when({ type: 'ChangeMemberRole', data: { userId: 'u2', role: 'spectator' } })
      .then([{ type: 'MemberRoleChanged', data: { userId: 'u2', role: 'spectator' } }]);
    given(history)
      .when({ type: 'ChangeMemberRole', data: { userId: 'u2', role: 'player' } })
      .then([]);
    history.run({ type: 'ChangeMemberRole', data: { userId: 'u2', role: 'spectator' } });
    expect(activePlayers(history.state).map((m) => m.userId)).toEqual(['owner-1']);
  });

  it('given a stranger, when kicked or given a role, then NotFound', () => {
    given(room())
      .when({ type: 'KickMember', data: { userId: 'nobody' } })
      .thenThrows(NotFoundError, 'not_found', /not a member/);
  });

  it('given a member who left, when the host bans them, then MemberKicked banned', () => {
    const history = room('u2');
    history.run({ type: 'LeaveRoom', data: { userId: 'u2' } });
    given(history)
      .when({ type: 'KickMember', data: { userId: 'u2', ban: true } })
      .then([{ type: 'MemberKicked', data: { userId: 'u2', banned: true } }]);
  });

  it('given a member, when they change their character, then CharacterChanged; charactersOf lists the host persona first', () => {
    const history = room('u2');
    history.run({
      type: 'ChangeCharacter',
      data: { userId: 'u2', character: { name: 'Ren', pronouns: 'he/him' } },
    });
    expect(charactersOf(history.state)).toEqual([
      { userId: 'owner-1', character: history.state.fields.persona },
      { userId: 'u2', character: { name: 'Ren', pronouns: 'he/him', description: '' } },
    ]);
  });

  it('given a player, when the host hands the room over, then the player is owner and host first, the former host a player', () => {
    const history = room('u2');
    given(history)
      .when({ type: 'HandOverRoom', data: { userId: 'u2' } })
      .then([{ type: 'RoomHandedOver', data: { from: 'owner-1', to: 'u2' } }]);
    history.run({ type: 'HandOverRoom', data: { userId: 'u2' } });
    const { state } = history;
    expect(state.ownerId).toBe('u2');
    expect(state.room.members.map((m) => [m.userId, m.role])).toEqual([
      ['u2', 'host'],
      ['owner-1', 'player'],
    ]);
  });
});

describe('room events: folds and checks', () => {
  it('given a history of every room event, then the fast projector and evolve agree, and every event passes its import check', () => {
    const history = room('u2', 'u3');
    history.run({ type: 'ChangeCharacter', data: { userId: 'u3', character: mira } });
    history.run({ type: 'ChangeMemberRole', data: { userId: 'u3', role: 'spectator' } });
    history.run({ type: 'KickMember', data: { userId: 'u3', ban: true } });
    history.run({ type: 'HandOverRoom', data: { userId: 'u2' } });
    history.run({ type: 'LeaveRoom', data: { userId: 'owner-1' } });
    history.run({ type: 'RevokeInvite', data: { code: 'code-1' } });
    history.append({
      type: 'RoomReset',
      data: { hostId: 'u2', droppedMembers: [], droppedInvites: 0, reason: 'import' },
    });
    expect(plainView(history.state)).toEqual(plainProject(history.events));
    const replay = AdventureHistory.create();
    for (const event of history.events.slice(1)) {
      expect(() => checkRecordedEvent(event, replay.state)).not.toThrow();
      replay.append(event);
    }
  });

  it('given a spent invite, when a new one is created, then the spent one is pruned', () => {
    const history = AdventureHistory.create();
    invite(history, 'one-use', { maxUses: 1 });
    join(history, 'u2', 'one-use');
    invite(history, 'next');
    expect(history.state.room.invites.map((i) => i.code)).toEqual(['next']);
  });

  it('given a hand-over that names a stranger, when checked as an import, then refused', () => {
    const history = AdventureHistory.create();
    expect(() =>
      checkRecordedEvent(
        { type: 'RoomHandedOver', data: { from: 'owner-1', to: 'stranger' } },
        history.state,
      ),
    ).toThrow(/not a member/);
  });

  it('given room settings, when edited with bad values, then refused; good ones are kept', () => {
    const history = AdventureHistory.create();
    const edit = (settings: Record<string, unknown>) => () =>
      decide({ type: 'EditAdventure', data: { settings } }, history.state, wordCountTokens);
    expect(edit({ turnPolicy: 'chaos' })).toThrow(/turnPolicy/);
    expect(edit({ idleTimeoutSeconds: 1 })).toThrow(/idleTimeoutSeconds/);
    expect(edit({ perPlayerDailyTokens: -1 })).toThrow(/perPlayerDailyTokens/);
    expect(history.state.settings).toMatchObject({
      turnPolicy: 'free',
      idleTimeoutSeconds: 300,
      roundTimeoutSeconds: 0,
      perPlayerDailyTokens: 0,
    });
    expect(edit({ turnPolicy: 'round', roundTimeoutSeconds: 120 })()).toEqual([
      {
        type: 'AdventureEdited',
        data: { settings: { turnPolicy: 'round', roundTimeoutSeconds: 120 } },
      },
    ]);
  });
});
