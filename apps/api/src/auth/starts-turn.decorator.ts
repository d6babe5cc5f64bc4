import { SetMetadata } from '@nestjs/common';

export const STARTS_TURN = 'chronicle:starts-turn';

/**
 * The route starts a turn (a model call): it counts against the per-key turn limit instead of
 * the write limit, and is refused once the user's daily model-token budget is spent.
 */
export const StartsTurn = () => SetMetadata(STARTS_TURN, true);

/**
 * The route calls a model while the client waits (a summary regeneration): held to the same
 * turn limit and daily budget as a turn.
 */
export const CallsModel = StartsTurn;
