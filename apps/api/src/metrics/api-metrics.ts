import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ChronicleMetrics, type QueueSnapshot } from '@chronicle/metrics';
import { ALL_QUEUES, QueueProducer } from '@chronicle/queue';
import type { NextFunction, Request, Response } from 'express';
import { StreamSlots } from '../adventures/stream-slots';

/** Longest a scrape waits for Redis's queue figures before it answers without them. */
const QUEUE_READ_TIMEOUT_MS = 2_000;
const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

/**
 * The API's seams into its metrics: the queues (read from Redis when scraped, so every API
 * instance reports them, workers up or not), the open turn streams, and every answered request.
 */
@Injectable()
export class ApiMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: ChronicleMetrics,
    private readonly producer: QueueProducer,
    private readonly slots: StreamSlots,
  ) {}

  onModuleInit(): void {
    this.metrics.readQueuesFrom(() => this.readQueues());
    this.metrics.countSseFrom(() => this.slots.openCount);
  }

  /**
   * Express middleware: each answered request's duration by method, route template (never the
   * path itself: ids stay out of labels) and status.
   */
  readonly observeRequests = (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const route = (req.route as { path?: unknown } | undefined)?.path;
      this.metrics.httpRequestDuration.observe(
        {
          method: KNOWN_METHODS.has(req.method) ? req.method : 'OTHER',
          route: typeof route === 'string' ? route : 'unmatched',
          status: String(res.statusCode),
        },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    next();
  };

  private async readQueues(): Promise<QueueSnapshot[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('queue read timed out')), QUEUE_READ_TIMEOUT_MS);
    });
    try {
      return await Promise.race([
        Promise.all(ALL_QUEUES.map((name) => this.readQueue(name))),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async readQueue(name: (typeof ALL_QUEUES)[number]): Promise<QueueSnapshot> {
    const queue = this.producer.queue(name);
    const [counts, oldest] = await Promise.all([
      queue.getJobCounts(...JOB_STATES),
      // A list's oldest job is its far end (asc): the next one a worker takes.
      queue.getJobs(['wait'], 0, 0, true),
    ]);
    const waitingSince = oldest[0]?.timestamp;
    return {
      queue: name,
      counts,
      oldestWaitingSeconds:
        waitingSince === undefined ? null : Math.max(0, (Date.now() - waitingSince) / 1000),
    };
  }
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
