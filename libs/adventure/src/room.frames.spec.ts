import type { RecordedAdventureEvent } from './adventure.events';
import { roomFramesOf, showsOnRoomStream, turnOf } from './room.frames';

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
});
