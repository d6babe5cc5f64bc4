import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import {
  nodeOf,
  turnStatus,
  type AdventureCommand,
  type AdventureState,
  type InputType,
  type PlayerActed,
} from '@chronicle/adventure';
import { AdventureCommandHandler, deterministicEventId } from '@chronicle/adventure-store';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { requestMetadata } from '../http/request-actor';
import { AdventureIndexRepository } from './adventure-index.repository';
import { turnStreamPath } from './adventure.reader';

/** The answer to an accepted turn (202): where to watch it. */
export interface TurnAccepted {
  turnId: string;
  /** The player action written; null for continue and retry. */
  actionId: string | null;
  /** The stream version right after the event that started the turn. */
  version: number;
  stream: string;
}

const PLAYER_ACTIONS: ReadonlySet<string> = new Set(['do', 'say', 'story']);

/** The projection shows that this client id already started a turn here. */
function isResend(state: AdventureState, clientId: string): boolean {
  const node = nodeOf(state, clientId);
  if (node) return PLAYER_ACTIONS.has(node.type) && node.turnId !== null;
  return turnStatus(state, clientId) !== null;
}

function isDomainError(error: unknown): boolean {
  const kind = (error as { kind?: unknown } | null)?.kind;
  return kind === 'conflict' || kind === 'invalid' || kind === 'not_found';
}

/**
 * Starts turns: a player action (or continue) and a retry. The client's id is the id of the
 * event that starts the turn, so a resend finds the original in the log and gets the same
 * answer — never a second turn, never a 409 — even when two copies race.
 */
@Injectable()
export class SubmitActionUseCase {
  private readonly logger = new Logger('turns');

  constructor(
    private readonly adventures: AdventureCommandHandler,
    private readonly index: AdventureIndexRepository,
    private readonly stream: TurnStreamPublisher,
  ) {}

  async act(
    adventureId: string,
    input: { type: InputType; text?: string; id?: string },
  ): Promise<TurnAccepted> {
    const clientId = input.id?.toLowerCase();
    const eventId = clientId ?? randomUUID();
    // continue writes no action, so the client id names the turn itself; an action's turn id
    // is derived from the action id, so two racing copies propose the same turn.
    const turnId =
      input.type === 'continue' ? eventId : deterministicEventId(adventureId, eventId, 'turn');
    return this.start(adventureId, eventId, clientId, {
      type: 'SubmitAction',
      data: { turnId, inputType: input.type, text: input.text ?? '', actionId: eventId },
    });
  }

  async retry(adventureId: string, input: { id?: string }): Promise<TurnAccepted> {
    const clientId = input.id?.toLowerCase();
    const turnId = clientId ?? randomUUID();
    return this.start(adventureId, turnId, clientId, { type: 'RequestRetry', data: { turnId } });
  }

  /**
   * One load: the resend check and the decision read the same projection; the narrate job
   * follows from the event (see `jobsAfter`). A resend the projection cannot show (a turn older
   * than it remembers) is caught by the event id instead: the append finds it stored and
   * answers with the original.
   */
  private async start(
    adventureId: string,
    eventId: string,
    clientId: string | undefined,
    command: AdventureCommand & { data: { turnId: string } },
  ): Promise<TurnAccepted> {
    const turnId = command.data.turnId;
    try {
      const state = await this.adventures.get(adventureId);
      if (clientId !== undefined && isResend(state, clientId)) {
        const original = await this.originalTurn(adventureId, state, clientId);
        if (original) return original;
      }
      // Decided on the state just read: the append at its version proves it current.
      const handled = await this.adventures.handle(
        adventureId,
        { ...command, key: eventId },
        requestMetadata(),
        { state },
      );
      if (handled.duplicate) {
        const original = await this.originalTurn(adventureId, handled.state, eventId);
        if (original) return original;
      }
      const started = handled.events[0];
      if (started?.type === 'PlayerActed') await this.announce(turnId, started);
      const action = started?.type === 'PlayerActed' ? started.data.action : null;
      return {
        turnId,
        actionId: action?.id ?? null,
        version: started?.version ?? handled.state.version,
        stream: turnStreamPath(adventureId, turnId),
      };
    } catch (error) {
      // A copy of this request won the race (its turn is now in flight, or its action exists),
      // or the id names a turn too old for the projection to show, which the decider refused
      // before the append could recognise it: answer with that turn.
      if (clientId !== undefined && isDomainError(error)) {
        const state = await this.adventures.get(adventureId);
        const original = await this.originalTurn(adventureId, state, clientId);
        if (original) return original;
      }
      throw error;
    }
  }

  /** The turn a client id already started, or null when the id is new to this adventure. */
  private async originalTurn(
    adventureId: string,
    state: AdventureState,
    clientId: string,
  ): Promise<TurnAccepted | null> {
    const node = nodeOf(state, clientId);
    if (node) {
      // The id names something else (a narration, the opening): not a resend; the decider
      // refuses it with a message naming the id.
      if (!PLAYER_ACTIONS.has(node.type) || node.turnId === null) return null;
      const version = await this.index.versionOfEvent(adventureId, clientId);
      return {
        turnId: node.turnId,
        actionId: clientId,
        version: version ?? node.textVersion,
        stream: turnStreamPath(adventureId, node.turnId),
      };
    }
    // A continue or a retry: the client id is the turn id. The projection knows recent turns;
    // an older one is found by its event id.
    const known = turnStatus(state, clientId) !== null;
    const version = await this.index.versionOfEvent(adventureId, clientId);
    if (!known && version === null) return null;
    return {
      turnId: clientId,
      actionId: null,
      version: version ?? state.version,
      stream: turnStreamPath(adventureId, clientId),
    };
  }

  /** The first frame of the turn's stream: the player's action as the story will show it. */
  private async announce(turnId: string, event: PlayerActed): Promise<void> {
    const action = event.data.action;
    try {
      await this.stream.publish(turnId, 'player', {
        action: action ? { id: action.id, type: action.type, text: action.text } : null,
      });
    } catch (error) {
      // The turn is accepted and queued; a client that misses `player` still gets the rest.
      this.logger.warn(`could not publish player for turn ${turnId}: ${(error as Error).message}`);
    }
  }
}
