// Who a room's player action is written about, and which characters the prompt and the scripts
// are told of (docs/multiplayer.md §3.2, §3.6). One place, so the decider's third-person text,
// the narrator's player section and the scripts' info.characters name the same people.

import type { AdventureState } from './adventure.state';
import type { ActingCharacter } from './player-input.third-person';
import { charactersOf, isRoom, memberOf, type Character } from './room.state';

/**
 * The character `userId`'s action is written about, or null to write it as today, about "you":
 * a one-player adventure, a non-member, or a member with no named character. A host with no
 * character of their own plays the persona, as `charactersOf` reads it.
 */
export function actingCharacterOf(
  state: AdventureState,
  userId: string | null | undefined,
): ActingCharacter | null {
  if (!userId || !isRoom(state)) return null;
  const member = memberOf(state, userId);
  const character = member?.character ?? (member?.role === 'host' ? state.fields.persona : null);
  const name = character?.name.trim() ?? '';
  return character && name !== '' ? { name, pronouns: character.pronouns } : null;
}

/** A room's active players' characters, in join order; null for a one-player adventure. */
export function roomCharacters(state: AdventureState): Character[] | null {
  return isRoom(state) ? charactersOf(state).map(({ character }) => character) : null;
}
