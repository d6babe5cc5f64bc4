import { Controller, Get, Headers, HttpStatus, Logger, Param, Query, Res } from '@nestjs/common';
import {
  ApiHeader,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentUser, type RequestUser } from '../auth/request-user';
import { FollowRoomUseCase, type SseRoomFrame } from './follow-room.use-case';
import { StreamSlots } from './stream-slots';
import { HEARTBEAT_MS } from './turns.controller';

const STREAM_CLOSED = new Error('the room stream closed');

@ApiTags('turns')
@Controller('v1/adventures/:id')
export class RoomStreamController {
  private readonly logger = new Logger('sse');

  constructor(
    private readonly follow: FollowRoomUseCase,
    private readonly slots: StreamSlots,
  ) {}

  @Get('stream')
  @ApiOperation({
    summary:
      "Server-sent events for the room: joined, left, role-changed, character-changed, handed-over, turn-started, and each turn's player, chunk, reset, then done {roundId, actionIds} or error; resumable",
  })
  @ApiProduces('text/event-stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume after this frame (its id); without it the stream starts now',
  })
  @ApiQuery({ name: 'lastEventId', required: false, description: 'Same as Last-Event-ID' })
  @ApiResponse({
    status: 429,
    description: 'Too many streams open for this key (SSE_MAX_PER_KEY) or this server',
  })
  async stream(
    @Param('id') id: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('lastEventId') query: string | undefined,
    @CurrentUser() user: RequestUser,
    @Res() res: Response,
  ): Promise<void> {
    const cursor = await this.follow.open(id, header || query || undefined);
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
      for await (const frame of this.follow.frames(id, cursor, disconnected.signal)) {
        res.write(roomSseFrame(frame));
      }
    } catch (error) {
      if (!disconnected.signal.aborted) {
        this.logger.error({
          msg: 'room stream failed',
          adventureId: id,
          error: (error as Error).message,
        });
        res.write(': the stream broke off; reconnect with Last-Event-ID to resume\n\n');
      }
    } finally {
      clearInterval(heartbeat);
      release();
      res.end();
    }
  }
}

export function roomSseFrame(frame: SseRoomFrame): string {
  return `id: ${frame.id}\nevent: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
}
