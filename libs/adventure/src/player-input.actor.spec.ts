import type { AdventureState } from './adventure.state';
import { actingCharacterOf, roomCharacters } from './player-input.actor';
import type { RoomMember } from './room.state';
import { AdventureHistory } from './testing';

// The owner (owner-1) plays the persona Ash (they/them) until they pick a character.
const mira = { name: 'Mira', pronouns: 'she/her', description: 'A smith.' };
const bo = { name: 'Bo', pronouns: 'he/him', description: '' };

function withMembers(...members: RoomMember[]): AdventureState {
  const { state } = AdventureHistory.create();
  return { ...state, room: { members, invites: [], banned: [] } };
}
const host = (character: RoomMember['character'] = null): RoomMember => ({
  userId: 'owner-1',
  role: 'host',
  character,
  status: 'active',
});
const member = (userId: string, over: Partial<RoomMember> = {}): RoomMember => ({
  userId,
  role: 'player',
  character: mira,
  status: 'active',
  ...over,
});

describe('who a room action is written about', () => {
  it('given a one-player adventure, then no one: the action is written about "you"', () => {
    const state = withMembers(host());
    expect(actingCharacterOf(state, 'owner-1')).toBeNull();
    expect(roomCharacters(state)).toBeNull();
  });

  it('given a room, when a player acts, then their character, by name and pronouns', () => {
    const state = withMembers(host(), member('u-mira'));
    expect(actingCharacterOf(state, 'u-mira')).toEqual({ name: 'Mira', pronouns: 'she/her' });
  });

  it('given a room, when a player marked away acts (which makes them active again), then still their character', () => {
    const state = withMembers(host(), member('u-mira', { status: 'away' }));
    expect(actingCharacterOf(state, 'u-mira')).toEqual({ name: 'Mira', pronouns: 'she/her' });
  });

  it('given a room whose host has no character, when the host acts, then the persona', () => {
    const state = withMembers(host(), member('u-mira'));
    expect(actingCharacterOf(state, 'owner-1')).toEqual({ name: 'Ash', pronouns: 'they/them' });
  });

  it('given a room, when a non-member, a spectator without character or no one acts, then no one', () => {
    const state = withMembers(
      host(),
      member('u-mira'),
      member('u-eye', { role: 'spectator', character: null }),
    );
    expect(actingCharacterOf(state, 'u-stranger')).toBeNull();
    expect(actingCharacterOf(state, 'u-eye')).toBeNull();
    expect(actingCharacterOf(state, undefined)).toBeNull();
  });

  it("given a room, then its characters are the active players', host first, away and left ones out", () => {
    const state = withMembers(
      host(),
      member('u-mira'),
      member('u-bo', { character: bo }),
      member('u-away', { character: { ...bo, name: 'Ty' }, status: 'away' }),
      member('u-gone', { character: { ...bo, name: 'Zed' }, status: 'left' }),
      member('u-eye', { role: 'spectator', character: { ...bo, name: 'Eye' } }),
    );
    expect(roomCharacters(state)?.map((c) => c.name)).toEqual(['Ash', 'Mira', 'Bo']);
  });
});
