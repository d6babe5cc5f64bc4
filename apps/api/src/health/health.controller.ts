import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import { QueueProducer } from '@chronicle/queue';
import type { Response } from 'express';
import { type Kysely, sql } from 'kysely';

const CHECK_TIMEOUT_MS = 1000;

@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    @Inject(EVENT_STORE_DB) private readonly db: Kysely<Database>,
    private readonly queue: QueueProducer,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Postgres and Redis reachable (503 when either is down)' })
  async health(@Res() res: Response): Promise<void> {
    const [postgres, redis] = await Promise.all([
      this.postgres(),
      this.queue.ping(CHECK_TIMEOUT_MS),
    ]);
    const ok = postgres && redis;
    res.status(ok ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE).json({
      status: ok ? 'ok' : 'unavailable',
      postgres: postgres ? 'up' : 'down',
      redis: redis ? 'up' : 'down',
    });
  }

  private async postgres(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        sql`SELECT 1`.execute(this.db).then(() => true),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
        }),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
