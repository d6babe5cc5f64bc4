// The player's client of the fault suite: the e2e suite's ChronicleClient, with every answer to a
// turn-starting request and every stream it read written into a HistoryLedger, so the history
// checker can hold the log against what the players were told. A request that gets no answer
// (connection refused or cut, a timeout) is an answer too: status 0.
import { randomUUID } from 'node:crypto';
import type { HistoryLedger, ReadTurnStreamOptions, TurnStreamResult } from '@chronicle/testing';
import {
  ChronicleClient,
  type ActionType,
  type HttpResult,
  type TurnAccepted,
} from '../../e2e/support/chronicle.client';

const STREAM_PATH = /^\/v1\/adventures\/([^/]+)\/turns\/([^/]+)\/stream$/;

export class RecordingClient extends ChronicleClient {
  constructor(
    baseUrl: string,
    readonly ledger: HistoryLedger,
    headers: Record<string, string> = {},
  ) {
    super(baseUrl, headers);
  }

  /** The same client on another API address (a restarted API listens on a new port). */
  at(baseUrl: string): RecordingClient {
    return new RecordingClient(baseUrl, this.ledger);
  }

  override async act(
    adventureId: string,
    type: ActionType,
    text: string,
    id: string = randomUUID(),
  ): Promise<HttpResult<TurnAccepted>> {
    let result: HttpResult<TurnAccepted>;
    try {
      result = await super.act(adventureId, type, text, id);
    } catch (error) {
      result = {
        status: 0,
        body: { error: (error as Error).message } as never,
        headers: new Headers(),
      };
    }
    this.ledger.submitted({
      adventureId,
      id,
      status: result.status,
      turnId: result.status === 202 ? result.body.turnId : undefined,
    });
    return result;
  }

  override async follow(
    turn: Pick<TurnAccepted, 'stream'>,
    options: ReadTurnStreamOptions = {},
  ): Promise<TurnStreamResult> {
    // a player's screen keeps trying through an outage, as EventSource does
    const result = await super.follow(turn, {
      reconnectOnServerError: true,
      maxConnections: 400,
      ...options,
    });
    const match = STREAM_PATH.exec(turn.stream);
    if (match) this.ledger.watched({ adventureId: match[1], turnId: match[2], result });
    return result;
  }
}
