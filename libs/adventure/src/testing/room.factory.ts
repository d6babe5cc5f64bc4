// A room for tests: an adventure whose owner (the host) invited players who joined, under a
// turn policy, played through the real deciders (room.decider.ts, round.decider.ts).

import type { AdventureSettings } from '../adventure.events';
import { AdventureHistory } from './adventure.factory';

const NOW = '2026-12-06T00:00:00.000Z';

/** The owner (`owner-1`, the host) and `players` (their user ids, each with a character of that name). */
export function roomHistory(
  players: readonly string[],
  settings: Partial<AdventureSettings> = {},
  history: AdventureHistory = AdventureHistory.create(),
): AdventureHistory {
  history.run({
    type: 'CreateInvite',
    data: { code: 'invite-1', role: 'player', maxUses: null, expiresInSeconds: null, now: NOW },
  });
  for (const userId of players) {
    history.run({
      type: 'JoinRoom',
      data: {
        code: 'invite-1',
        userId,
        character: { name: capitalised(userId), pronouns: 'she/her', description: '' },
        now: NOW,
      },
    });
  }
  if (Object.keys(settings).length > 0) history.run({ type: 'EditAdventure', data: { settings } });
  return history;
}

function capitalised(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
