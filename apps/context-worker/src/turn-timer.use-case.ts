import { Injectable, Logger } from '@nestjs/common';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import type { TurnTimerJob } from '@chronicle/queue';

/**
 * A room's timer ran out (round timeout, idle → away, hot-seat skip): the decider says what it
 * does on the adventure as it is now (`FireTurnTimer`), which is nothing when the round or seat
 * it was set for has moved on. A redelivered job asks again and finds nothing to do.
 */
@Injectable()
export class TurnTimerUseCase {
  private readonly logger = new Logger('TurnTimer');

  constructor(private readonly adventures: AdventureCommandHandler) {}

  async fire(job: TurnTimerJob, jobId: string): Promise<{ appended: number }> {
    const handled = await this.adventures.handle(
      job.adventureId,
      { type: 'FireTurnTimer', data: job.timer },
      { actor: 'worker:context', jobId },
    );
    if (handled.events.length > 0) {
      this.logger.log({
        msg: 'room timer ran out',
        adventureId: job.adventureId,
        timer: job.timer.timer,
        events: handled.events.map((event) => event.type),
      });
    }
    return { appended: handled.events.length };
  }
}
