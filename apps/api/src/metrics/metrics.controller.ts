import { Controller, Get, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ChronicleMetrics } from '@chronicle/metrics';
import type { Response } from 'express';

// Closed to every key but ADMIN_API_KEY, however the path is spelled (the access guard holds
// every spelling of /metrics to the admin key, as it does /v1/admin).
@ApiTags('operations')
@ApiBearerAuth()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: ChronicleMetrics) {}

  @Get()
  @ApiOperation({
    summary:
      "This API instance's Prometheus metrics (admin key): HTTP requests, open turn streams, queue depths and ages, Node process figures",
  })
  async scrape(@Res() res: Response): Promise<void> {
    const { contentType, body } = await this.metrics.exposition();
    res.status(200).setHeader('content-type', contentType).setHeader('cache-control', 'no-store');
    res.send(body);
  }
}
