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
  ApiHeader,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { RetryDto, SubmitActionDto } from './adventure.dto';
import { FollowTurnUseCase, type TurnFrame } from './follow-turn.use-case';
import { SubmitActionUseCase } from './submit-action.use-case';
import { TurnsUseCase } from './turns.use-case';
import { StartsTurn } from '../auth/starts-turn.decorator';

/** A comment line every 15 s keeps proxies and clients from closing a quiet stream. */
export const HEARTBEAT_MS = 15_000;

@ApiTags('turns')
@Controller('v1/adventures/:id')
export class TurnsController {
  private readonly logger = new Logger('sse');

  constructor(
    private readonly submit: SubmitActionUseCase,
    private readonly turns: TurnsUseCase,
    private readonly follow: FollowTurnUseCase,
  ) {}

  @Post('actions')
  @StartsTurn()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({ summary: 'Act (do, say, story) or continue: starts a turn' })
  @ApiResponse({ status: 202, description: '{turnId, actionId, version, stream}' })
  @ApiResponse({ status: 409, description: 'A turn is in flight; wait for it or cancel it' })
  act(@Param('id') id: string, @Body() body: SubmitActionDto) {
    return this.submit.act(id, body);
  }

  @Post('retry')
  @StartsTurn()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({ summary: 'Narrate the last turn again as a new take' })
  @ApiResponse({ status: 202, description: '{turnId, actionId: null, version, stream}' })
  retry(@Param('id') id: string, @Body() body: RetryDto) {
    return this.submit.retry(id, body ?? {});
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
  async stream(
    @Param('id') id: string,
    @Param('turnId') turnId: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('lastEventId') query: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const lastEventId = header || query || undefined;
    const opened = await this.follow.open(id, turnId, lastEventId);
    res.status(HttpStatus.OK);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    const disconnected = new AbortController();
    res.on('close', () => disconnected.abort());
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    try {
      const frames = this.follow.frames(id, turnId, lastEventId, disconnected.signal, opened);
      for await (const frame of frames) {
        res.write(sseFrame(frame));
      }
    } catch (error) {
      if (!disconnected.signal.aborted) {
        this.logger.error(`turn ${turnId} stream failed: ${(error as Error).message}`);
        // Not an `error` event: that one ends the turn on a client's screen, and the turn goes on
        // (the worker still narrates it). A comment, then the end of the response: the client
        // reconnects with Last-Event-ID, as EventSource does by itself.
        res.write(': the stream broke off; reconnect with Last-Event-ID to resume\n\n');
      }
    } finally {
      clearInterval(heartbeat);
      res.end();
    }
  }
}

export function sseFrame(frame: TurnFrame): string {
  const id = frame.id ? `id: ${frame.id}\n` : '';
  return `${id}event: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}
