import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { EVENT_STORE_DB, type Database } from '@chronicle/event-store';
import { judgeRedisSettings } from '@chronicle/platform';
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
  @ApiOperation({
    summary:
      'Postgres and Redis reachable and Redis safely configured (503 when either is down, or Redis may evict keys)',
  })
  async health(@Res() res: Response): Promise<void> {
    const [postgres, redis, settings] = await Promise.all([
      this.postgres(),
      this.queue.ping(CHECK_TIMEOUT_MS),
      this.queue.redisSettings(CHECK_TIMEOUT_MS),
    ]);
    const verdict = settings ? judgeRedisSettings(settings) : { warnings: [] };
    const ok = postgres && redis && !verdict.problem;
    res.status(ok ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE).json({
      status: ok ? 'ok' : 'unavailable',
      postgres: postgres ? 'up' : 'down',
      redis: redis ? 'up' : 'down',
      ...(settings && {
        redisMaxmemoryPolicy: settings.maxmemoryPolicy,
        redisAof: settings.appendOnly,
      }),
      ...(verdict.problem && { problem: verdict.problem }),
      ...(verdict.warnings.length > 0 && { warnings: verdict.warnings }),
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
