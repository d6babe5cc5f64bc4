import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Logger,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiHeader,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { BadRequestException } from '@nestjs/common';
import { RetryDto, SubmitActionDto } from './adventure.dto';
import { TurnAcceptedView } from './adventure.views';
import { isUuid } from '../http/path-params.pipe';
import { encodeFrame } from '@chronicle/turn-stream';
import { FollowTurnUseCase, type SseTurnFrame } from './follow-turn.use-case';
import { SubmitActionUseCase } from './submit-action.use-case';
import { TurnsUseCase } from './turns.use-case';
import { StreamSlots } from './stream-slots';
import { PlayerDailyCap } from './player-daily-cap';
import { CurrentUser, type RequestUser } from '../auth/request-user';
import { StartsTurn } from '../auth/starts-turn.decorator';

/** A comment line every 15 s keeps proxies and clients from closing a quiet stream. */
export const HEARTBEAT_MS = 15_000;

/**
 * Why a stream's follow stops: its response closed. One value for every stream, as an abort
 * without a reason builds a DOMException, stack and all, at the end of every turn's stream.
 */
const STREAM_CLOSED = new Error('the turn stream closed');

@ApiTags('turns')
@Controller('v1/adventures/:id')
export class TurnsController {
  private readonly logger = new Logger('sse');

  constructor(
    private readonly submit: SubmitActionUseCase,
    private readonly turns: TurnsUseCase,
    private readonly follow: FollowTurnUseCase,
    private readonly slots: StreamSlots,
    private readonly playerCap: PlayerDailyCap,
  ) {}

  @Post('actions')
  @StartsTurn()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    summary: 'Act (do, say, story) or continue: starts a turn',
    description:
      "In a room the turn policy answers. `free`: starts a turn, or holds the action for the next (`held: true`; `turnId` is the next turn, `stream` the room's, which says when it starts). `round`: submits it to the open round (`roundId`, `submitted: true`; `turnId` is the round's turn; `closed: true` and the turn's `stream` when this submission closed the round, else the room's `stream`). `hot-seat`: acts only on the player's seat (409 with `currentPlayer` otherwise).",
  })
  @ApiAcceptedResponse({ type: TurnAcceptedView })
  @ApiResponse({
    status: 409,
    description: "A turn is in flight (wait for it or cancel it); hot-seat: not the player's turn",
  })
  @ApiResponse({ status: 422, description: 'The id (idempotency key) was used with another body' })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'A UUID; the same as the body id (either may be sent; both must agree)',
  })
  @ApiResponse({
    status: 429,
    description: "In a room: the player's own perPlayerDailyTokens cap for today is spent",
  })
  async act(
    @Param('id') id: string,
    @Body() body: SubmitActionDto,
    @Headers('idempotency-key') key: string | undefined,
    @CurrentUser() user: RequestUser,
  ) {
    await this.playerCap.assertWithin(id, user.id);
    return this.submit.act(id, { ...body, id: idempotencyKey(body.id, key) }, user.id);
  }

  @Post('retry')
  @StartsTurn()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({ summary: 'Narrate the last turn again as a new take' })
  @ApiAcceptedResponse({ type: TurnAcceptedView, description: 'actionId is null' })
  @ApiResponse({ status: 422, description: 'The id (idempotency key) was used with another body' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'A UUID; as the body id' })
  retry(
    @Param('id') id: string,
    @Body() body: RetryDto,
    @Headers('idempotency-key') key: string | undefined,
  ) {
    return this.submit.retry(id, { id: idempotencyKey(body?.id, key) });
  }

  @Get('turns/:turnId')
  @ApiOperation({ summary: "A turn's status: queued, running, done, failed or cancelled" })
  status(@Param('id') id: string, @Param('turnId') turnId: string) {
    return this.turns.status(id, turnId);
  }

  @Post('turns/:turnId/cancel')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Stop a turn in flight (409 when it has finished)' })
  cancel(@Param('id') id: string, @Param('turnId') turnId: string) {
    return this.turns.cancel(id, turnId);
  }

  @Get('turns/:turnId/stream')
  @ApiOperation({
    summary:
      'Server-sent events: player, reasoning, chunk {text}, reset, then done {action} or error {message}',
  })
  @ApiProduces('text/event-stream')
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Replay after this entry' })
  @ApiQuery({ name: 'lastEventId', required: false, description: 'Same as Last-Event-ID' })
  @ApiResponse({
    status: 429,
    description: 'Too many streams open for this key (SSE_MAX_PER_KEY) or this server',
  })
  async stream(
    @Param('id') id: string,
    @Param('turnId') turnId: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('lastEventId') query: string | undefined,
    @CurrentUser() user: RequestUser,
    @Res() res: Response,
  ): Promise<void> {
    const lastEventId = header || query || undefined;
    const opened = await this.follow.open(id, turnId, lastEventId);
    const release = this.slots.acquire(user.keyId);
    res.on('close', release);
    res.status(HttpStatus.OK);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    const disconnected = new AbortController();
    res.on('close', () => disconnected.abort(STREAM_CLOSED));
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    try {
      const frames = this.follow.frames(id, turnId, lastEventId, disconnected.signal, opened);
      const write = tickWriter(res);
      for await (const frame of frames) write(sseFrame(frame));
    } catch (error) {
      if (!disconnected.signal.aborted) {
        this.logger.error({
          msg: 'turn stream failed',
          turnId,
          error: (error as Error).message,
        });
        // Not an `error` event: that one ends the turn on a client's screen, and the turn goes on
        // (the worker still narrates it). A comment, then the end of the response: the client
        // reconnects with Last-Event-ID, as EventSource does by itself.
        res.write(': the stream broke off; reconnect with Last-Event-ID to resume\n\n');
      }
    } finally {
      clearInterval(heartbeat);
      release();
      res.end();
    }
  }
}

/**
 * Writes to `res`, the writes of one tick in one packet. The hub hands a follower every entry of
 * one read at once (the player frame, a batch of chunks, the chunks and `done`): a `write` each
 * would cost a syscall each, more than the frames' bytes.
 */
function tickWriter(res: Response): (text: string) => void {
  let corked = false;
  return (text) => {
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(() => {
        corked = false;
        res.uncork();
      });
    }
    res.write(text);
  };
}

/** The request's idempotency key: the body's id or the Idempotency-Key header (they must agree). */
function idempotencyKey(
  bodyId: string | undefined,
  header: string | undefined,
): string | undefined {
  if (header === undefined) return bodyId;
  if (!isUuid(header)) {
    throw new BadRequestException('header Idempotency-Key must be a UUID (the client action id)');
  }
  if (bodyId !== undefined && bodyId.toLowerCase() !== header.toLowerCase()) {
    throw new BadRequestException(
      'header Idempotency-Key and the body id name different requests; send one of them, or the same UUID in both',
    );
  }
  return header;
}

/** An SSE message holds a frame as the stream entry does: encodeFrame's event and data. */
export function sseFrame(frame: SseTurnFrame): string {
  const id = frame.id ? `id: ${frame.id}\n` : '';
  const { event, data } = encodeFrame(frame);
  return `${id}event: ${event}\ndata: ${data}\n\n`;
}
