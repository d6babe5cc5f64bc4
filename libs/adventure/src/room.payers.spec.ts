import type { RoomCommand } from './room.decider';
import { membersAnsweredBy, playerDailyCap } from './room.payers';
import { AdventureHistory } from './testing';
import { roomHistory } from './testing/room.factory';

const T0 = '2026-12-06T03:00:00.000Z';

function room(capTokens: number, ...joiners: string[]) {
  const history = AdventureHistory.create();
  history.run({
    type: 'CreateInvite',
    data: { code: 'c', role: 'player', now: T0 },
  } as RoomCommand);
  for (const userId of joiners) {
    history.run({
      type: 'JoinRoom',
      data: { code: 'c', userId, character: { name: `${userId}-char` }, now: T0 },
    } as RoomCommand);
  }
  history.run({ type: 'EditAdventure', data: { settings: { perPlayerDailyTokens: capTokens } } });
  return history.state;
}

describe('who pays in a room', () => {
  it('given a room with a cap, then a player is held to it and the host is not', () => {
    const state = room(500, 'p1');
    expect(playerDailyCap(state, 'p1')).toBe(500);
    expect(playerDailyCap(state, state.ownerId as string)).toBeNull();
  });

  it('given no cap (0) or no room, then nobody is held', () => {
    expect(playerDailyCap(room(0, 'p1'), 'p1')).toBeNull();
    expect(playerDailyCap(room(500), 'p1')).toBeNull();
  });

  it('given a call of no turn in flight, or outside a room, then it answers no member', () => {
    const state = room(0, 'p1');
    expect(membersAnsweredBy(state, undefined)).toBeNull();
    expect(membersAnsweredBy(state, 'turn-not-in-flight')).toBeNull();
    expect(membersAnsweredBy(room(0), 'any')).toBeNull();
  });

  it("given a room's turns, then each call answers the senders of the actions its turn answers, not the host", () => {
    const history = roomHistory(['mira', 'tam'], { turnPolicy: 'free' });
    const act = (actorId: string, actionId: string) =>
      history.run({
        type: 'SubmitAction',
        data: { turnId: `turn-of-${actionId}`, inputType: 'do', text: 'go', actionId, actorId },
      });
    act('mira', 'a-1');
    expect(membersAnsweredBy(history.state, 'turn-of-a-1')).toEqual(['mira']);
    act('tam', 'a-2');
    act(history.state.ownerId as string, 'a-3');
    history.narrate({ actionId: 'n-1' });
    expect(membersAnsweredBy(history.state, 'turn-of-a-2')).toEqual(['tam', history.state.ownerId]);
  });
});
