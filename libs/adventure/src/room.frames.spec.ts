import type { RecordedAdventureEvent } from './adventure.events';
import { roomFramesOf, showsOnRoomStream, turnOf } from './room.frames';
import { roundOpenedBy } from './round.state';

const at = (version: number, event: object) => ({ ...event, version }) as RecordedAdventureEvent;
const mira = { name: 'Mira', pronouns: 'she/her', description: '' };

describe('roomFramesOf', () => {
  it('given a member joining, leaving or kicked, then joined and left frames at the event version', () => {
    expect(
      roomFramesOf(
        at(4, {
          type: 'MemberJoined',
          data: { userId: 'u1', role: 'player', character: mira, inviteCode: 'c', at: 'now' },
        }),
      ),
    ).toEqual([
      { event: 'joined', data: { userId: 'u1', role: 'player', character: mira, version: 4 } },
    ]);
    expect(roomFramesOf(at(5, { type: 'MemberLeft', data: { userId: 'u1' } }))).toEqual([
      { event: 'left', data: { userId: 'u1', reason: 'left', version: 5 } },
    ]);
    expect(
      roomFramesOf(at(6, { type: 'MemberKicked', data: { userId: 'u2', banned: true } })),
    ).toEqual([{ event: 'left', data: { userId: 'u2', reason: 'kicked', version: 6 } }]);
  });

  it('given a player action, then turn-started naming the turn and its action; its narration ends the turn and shows no frame', () => {
    const acted = at(7, {
      type: 'PlayerActed',
      data: {
        turnId: 't1',
        inputType: 'do',
        action: { id: 'a1', type: 'do', text: 'x', tokens: 1 },
      },
    });
    expect(roomFramesOf(acted)).toEqual([
      {
        event: 'turn-started',
        data: { turnId: 't1', roundId: null, actions: [{ id: 'a1', actorId: null }], version: 7 },
      },
    ]);
    const narrated = at(8, { type: 'Narrated', data: { turnId: 't1' } });
    expect(turnOf(narrated)).toEqual({ kind: 'ends', turnId: 't1' });
    expect(roomFramesOf(narrated)).toEqual([]);
    expect(showsOnRoomStream([narrated])).toBe(true);
  });

  it('given events the room does not show (a memory, a card), then no frame and nothing to announce', () => {
    const memory = at(9, { type: 'MemoryPinned', data: { memoryId: 'm' } });
    expect(roomFramesOf(memory)).toEqual([]);
    expect(turnOf(memory)).toBeNull();
    expect(showsOnRoomStream([memory])).toBe(false);
  });

  const action = (id: string, actorId: string) => ({
    id,
    type: 'do',
    text: `> ${actorId} secret plan`,
    tokens: 3,
    actorId,
  });

  it('given submissions, a withdrawal, a pass and an idle player, then frames naming the round and the players, never the text', () => {
    const frames = [
      at(10, {
        type: 'ActionSubmitted',
        data: { roundId: 'round-2', turnId: 't', action: action('a1', 'u1') },
      }),
      at(11, {
        type: 'SubmissionWithdrawn',
        data: { roundId: 'round-2', userId: 'u1', actionId: 'a1' },
      }),
      at(12, { type: 'PlayerPassed', data: { roundId: 'round-2', userId: 'u2' } }),
      at(13, { type: 'PlayerMarkedAway', data: { roundId: 'round-2', userId: 'u3' } }),
    ].flatMap(roomFramesOf);
    expect(frames).toEqual([
      {
        event: 'submitted',
        data: { roundId: 'round-2', userId: 'u1', actionId: 'a1', version: 10 },
      },
      {
        event: 'withdrawn',
        data: { roundId: 'round-2', userId: 'u1', actionId: 'a1', version: 11 },
      },
      { event: 'passed', data: { roundId: 'round-2', userId: 'u2', version: 12 } },
      { event: 'away', data: { roundId: 'round-2', userId: 'u3', version: 13 } },
    ]);
    expect(JSON.stringify(frames)).not.toContain('secret plan');
  });

  it('given a round closing with its actions, then round-closed with its turn, turn-started naming the round and each actor, then the next round opened', () => {
    const closed = at(14, {
      type: 'PlayersActed',
      data: {
        turnId: 't2',
        roundId: 'round-2',
        closedBy: 'all-in',
        actions: [action('a2', 'u2'), action('a1', 'u1')],
      },
    });
    expect(roomFramesOf(closed)).toEqual([
      {
        event: 'round-closed',
        data: { roundId: 'round-2', turnId: 't2', closedBy: 'all-in', version: 14 },
      },
      {
        event: 'turn-started',
        data: {
          turnId: 't2',
          roundId: 'round-2',
          actions: [
            { id: 'a2', actorId: 'u2' },
            { id: 'a1', actorId: 'u1' },
          ],
          version: 14,
        },
      },
      { event: 'round-opened', data: { roundId: 'round-3', version: 14 } },
    ]);
    expect(turnOf(closed)).toEqual({
      kind: 'starts',
      turnId: 't2',
      roundId: 'round-2',
      actions: [
        { id: 'a2', actorId: 'u2' },
        { id: 'a1', actorId: 'u1' },
      ],
    });
  });

  it('given a round everyone passed, then round-closed with no turn and the next round opened; given held actions of free, then only their turn starts', () => {
    const passed = at(15, { type: 'RoundClosed', data: { roundId: 'round-9', closedBy: 'timer' } });
    expect(roomFramesOf(passed)).toEqual([
      {
        event: 'round-closed',
        data: { roundId: 'round-9', turnId: null, closedBy: 'timer', version: 15 },
      },
      { event: 'round-opened', data: { roundId: 'round-10', version: 15 } },
    ]);
    const held = at(16, {
      type: 'PlayersActed',
      data: { turnId: 't3', roundId: null, closedBy: 'held', actions: [action('a3', 'u1')] },
    });
    expect(roomFramesOf(held)).toEqual([
      {
        event: 'turn-started',
        data: { turnId: 't3', roundId: null, actions: [{ id: 'a3', actorId: 'u1' }], version: 16 },
      },
    ]);
    expect(roundOpenedBy(held)).toBeNull();
    expect(roundOpenedBy(passed)).toBe('round-10');
  });
});
