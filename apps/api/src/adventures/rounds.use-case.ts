import { Injectable } from '@nestjs/common';
import type { AdventureEvent, RoundCommand } from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { requestReceivedAt } from '../http/correlation.middleware';
import { requestMetadata } from '../http/request-actor';
import type { RoundChangedView } from './adventure.views';

/**
 * A room's round (spec/multiplayer.md §3.3, policy `round`): a player passes or withdraws their
 * submission, the host closes the round now. The decider says what each does; a pass or a
 * close that leaves every player in starts the round's turn in the same append.
 */
@Injectable()
export class RoundsUseCase {
  constructor(private readonly adventures: AdventureCommandHandler) {}

  pass(adventureId: string, userId: string): Promise<RoundChangedView> {
    return this.run(adventureId, { type: 'PassRound', data: { userId } });
  }

  withdraw(adventureId: string, userId: string): Promise<RoundChangedView> {
    return this.run(adventureId, { type: 'WithdrawSubmission', data: { userId } });
  }

  close(adventureId: string, userId: string): Promise<RoundChangedView> {
    return this.run(adventureId, { type: 'CloseRound', data: { userId } });
  }

  private async run(adventureId: string, command: RoundCommand): Promise<RoundChangedView> {
    const before = await this.adventures.get(adventureId);
    const roundId = before.turns.round.id;
    const handled = await this.adventures.handle(
      adventureId,
      command,
      // A close starts a turn: POST → model request is measured from it.
      { ...requestMetadata(), requestedAt: requestReceivedAt() },
      { state: before },
    );
    const started = handled.events.find(
      (event: AdventureEvent) => event.type === 'PlayersActed',
    ) as Extract<AdventureEvent, { type: 'PlayersActed' }> | undefined;
    return { roundId, turnId: started?.data.turnId ?? null, version: handled.state.version };
  }
}
