import { Injectable, Logger } from '@nestjs/common';
import {
  NotFoundError,
  requireNode,
  scriptNoticesOfTurn,
  turnStatus,
  type AdventureState,
  type NarrationFailureCode,
  type TurnOutcomeStatus,
} from '@chronicle/adventure';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { ControlPlane } from '@chronicle/platform';
import { narrateJobId, QueueName, QueueProducer } from '@chronicle/queue';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { requestMetadata } from '../http/request-actor';

export type TurnStatusName = 'queued' | 'running' | TurnOutcomeStatus;

export interface TurnView {
  turnId: string;
  status: TurnStatusName;
  action?: { id: string; type: 'ai'; text: string };
  error?: string;
  /** A script stopped the turn: its `state.message`, or AI Dungeon's wording. */
  message?: string;
  /** The stable failure code (NarrationFailed's), when failed or cancelled. */
  code?: NarrationFailureCode;
  /** A script failed (or its context change was discarded) and the turn went on: what the player is told. */
  notices?: string[];
}

export const CANCELLED_MESSAGE = 'the turn was cancelled';

/** A turn's status, and cancelling one in flight. */
@Injectable()
export class TurnsUseCase {
  private readonly logger = new Logger('turns');

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly queue: QueueProducer,
    private readonly stream: TurnStreamPublisher,
    private readonly controlPlane: ControlPlane,
  ) {}

  async status(adventureId: string, turnId: string): Promise<TurnView> {
    const state = await this.adventures.get(adventureId);
    const view = await this.outcome(adventureId, state, turnId);
    if (!view) {
      throw new NotFoundError(
        `turn ${turnId} is not among this adventure's recent turns; read the event log for older ones`,
      );
    }
    if (view.status === 'queued' && (await this.isRunning(turnId))) view.status = 'running';
    const notices = scriptNoticesOfTurn(state, turnId);
    return notices.length > 0 ? { ...view, notices } : view;
  }

  /** The turn as the projection knows it (queued, not running: that is BullMQ's to say). */
  async outcome(
    adventureId: string,
    state: AdventureState,
    turnId: string,
  ): Promise<TurnView | null> {
    const known = turnStatus(state, turnId);
    if (!known) return null;
    switch (known.status) {
      case 'queued':
        return { turnId, status: 'queued' };
      case 'failed':
        return { turnId, status: 'failed', error: known.error, code: known.code };
      case 'cancelled':
        return { turnId, status: 'cancelled', error: CANCELLED_MESSAGE, code: 'cancelled' };
      case 'stopped':
        return { turnId, status: 'stopped', message: known.message };
      case 'done': {
        const node = requireNode(state, known.actionId);
        const [text] = await this.adventures.readActionTexts(adventureId, [node]);
        return { turnId, status: 'done', action: { id: node.id, type: 'ai', text } };
      }
    }
  }

  /**
   * Records the cancellation, ends the turn's stream with `error {cancelled}`, and tells the
   * worker running it to abort its model stream. The log decides: a turn that finished first
   * is a 409, and a worker that finishes after this finds its turn no longer in flight.
   */
  async cancel(adventureId: string, turnId: string) {
    const handled = await this.adventures.handle(
      adventureId,
      { type: 'CancelTurn', data: { turnId } },
      requestMetadata(),
    );
    await Promise.all([
      this.stream
        .publish(turnId, 'error', {
          code: 'cancelled',
          message: CANCELLED_MESSAGE,
          cancelled: true,
        })
        .catch((error: Error) =>
          this.logger.warn({
            msg: "could not end the cancelled turn's stream",
            turnId,
            error: error.message,
          }),
        ),
      this.controlPlane
        .cancelTurn(adventureId, turnId)
        .catch((error: Error) =>
          this.logger.warn({ msg: 'could not signal the cancel', turnId, error: error.message }),
        ),
    ]);
    return { turnId, status: 'cancelled' as const, version: handled.state.version };
  }

  private async isRunning(turnId: string): Promise<boolean> {
    try {
      const job = await this.queue.queue(QueueName.Narrate).getJob(narrateJobId(turnId));
      return (await job?.getState()) === 'active';
    } catch {
      // Redis unreachable: the log still says queued, which is true.
      return false;
    }
  }
}
