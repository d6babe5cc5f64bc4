// Admission of a narrate job, asked once at its start (see NarrateProcessor): may this turn
// narrate now, or how long does it wait? Two gates, both shared by every worker process through
// Redis (libs/queue): the turn's user has fewer than NARRATE_MAX_PER_USER turns narrating
// (UserLeases), and the provider key has room under its requests and tokens per minute and is
// not paused by a 429 (ProviderLimiter). A turn that waits goes back to the queue delayed and
// spends no attempt: waiting is not failing.
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import { AdventureOwners } from '@chronicle/accounts';
import { pauseMsOfRetryAfter, pausesTheProvider } from '@chronicle/adventure';
import { isModelError, isOfflineConfig, type ModelClient } from '@chronicle/llm';
import {
  asDependencyUnavailable,
  closeRedis,
  COMMAND_TIMEOUT_MS,
  createCommandConnection,
  describeError,
  type AppConfig,
} from '@chronicle/platform';
import {
  ProviderLimiter,
  providerIdOf,
  QueueName,
  QueueProducer,
  UserLeases,
} from '@chronicle/queue';
import type Redis from 'ioredis';
import { modelFailed } from './turn.facts';
import { WORKER_CONFIG } from './worker-config.token';

export const ADMISSION_REDIS = Symbol('ADMISSION_REDIS');
/** The provider key's shared limiter; null with the offline narrator (nothing to limit). */
export const PROVIDER_LIMITER = Symbol('PROVIDER_LIMITER');

/**
 * A waiter asks again after this long even when no release wakes it (a wake can be lost in a
 * race with its own delay). Long, because every waiter asking costs a fetch and a script: a user
 * with a hundred turns in line would otherwise keep the workers busy bouncing them.
 */
const LINE_RECHECK_MS = 15_000;
/** A waiter that has not asked for this long leaves the line (its job is gone). */
const LINE_STALE_MS = 4 * LINE_RECHECK_MS;
/** A provider slot this close is waited for in the job; a later one sends the job back delayed. */
const IN_JOB_WAIT_MS = 1_000;
/** How long a turn waits when Redis or Postgres cannot answer the admission. */
const UNAVAILABLE_WAIT_MS = 2_000;
export type Admission =
  | { status: 'admitted'; release(): Promise<void> }
  | { status: 'waiting'; untilMs: number; reason: string };

/** The job's fields admission reads (a bullmq Job has them). */
export interface AdmissionJob {
  id?: string;
  timestamp: number;
  data: { adventureId: string; turnId: string };
}

/**
 * How long a model error asks every narration to the provider to wait: a 429 that is a burst
 * limit (not a used-up quota, which no wait fixes), for its Retry-After (the turn workflow's
 * rule). null for any other error.
 */
export function providerPauseMs(error: unknown): number | null {
  if (!isModelError(error)) return null;
  const fact = modelFailed(error);
  return pausesTheProvider(fact) ? pauseMsOfRetryAfter(fact.retryAfterMs) : null;
}

@Injectable()
export class NarrateAdmission {
  private readonly logger = new Logger('NarrateAdmission');
  private readonly leases: UserLeases | null;

  constructor(
    @Inject(ADMISSION_REDIS) redis: Redis,
    @Inject(PROVIDER_LIMITER) private readonly provider: ProviderLimiter | null,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
    private readonly owners: AdventureOwners,
    private readonly producer: QueueProducer,
  ) {
    this.leases =
      config.narrateMaxPerUser > 0
        ? new UserLeases(redis, config.queuePrefix, {
            perUser: config.narrateMaxPerUser,
            leaseMs: config.narrateLockMs,
            staleMs: LINE_STALE_MS,
          })
        : null;
  }

  /** Whether the job may narrate now; an admitted job calls `release()` when it ends, however it ends. */
  async admit(job: AdmissionJob): Promise<Admission> {
    const jobId = job.id ?? job.data.turnId;
    let userId: string | null = null;
    try {
      userId = this.leases ? await this.owners.ownerOf(job.data.adventureId) : null;
      if (userId !== null && this.leases) {
        const grant = await this.leases.acquire(userId, jobId, job.timestamp);
        if (!grant.granted) {
          return this.wait(
            LINE_RECHECK_MS * (1 + Math.random() * 0.2),
            `the user has ${this.config.narrateMaxPerUser} turns narrating; this one is number ${grant.position} in line`,
          );
        }
      }
      const waited = await this.awaitProvider(jobId);
      if (waited) {
        // The job keeps its user slot while it waits for the provider: it is next, and the
        // user's other turns would only wait for the same provider.
        if (userId !== null && this.leases) {
          await this.leases.extend(
            userId,
            jobId,
            waited.untilMs - Date.now() + this.config.narrateLockMs,
          );
        }
        return waited;
      }
    } catch (error) {
      const unavailable = asDependencyUnavailable(error);
      if (!unavailable) throw error;
      if (userId !== null) await this.releaseSlot(userId, jobId);
      return this.wait(UNAVAILABLE_WAIT_MS, unavailable.message);
    }
    return { status: 'admitted', release: this.holdSlot(userId, jobId) };
  }

  /** null: the provider admits the job now; else the delayed wait. */
  private async awaitProvider(
    jobId: string,
  ): Promise<Extract<Admission, { status: 'waiting' }> | null> {
    if (!this.provider) return null;
    for (;;) {
      const admission = await this.provider.admit(jobId);
      if (admission.status === 'admitted') return null;
      if (admission.status === 'paused') {
        // Spread over a tenth of the pause, so the paused turns do not all ask at one instant.
        return this.wait(
          admission.waitMs * (1 + Math.random() * 0.1),
          `the model provider asked every narration to wait (429); ${admission.waitMs} ms left`,
        );
      }
      if (admission.waitMs > IN_JOB_WAIT_MS) {
        return this.wait(
          admission.waitMs,
          `waiting ${admission.waitMs} ms for its slot under the provider's limits`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, admission.waitMs));
    }
  }

  private wait(ms: number, reason: string): Extract<Admission, { status: 'waiting' }> {
    this.logger.log({ msg: 'turn waits', reason, waitMs: Math.round(ms) });
    return { status: 'waiting', untilMs: Date.now() + Math.round(ms), reason };
  }

  /** Renews the user's lease while the turn runs; the returned release frees it and wakes the next. */
  private holdSlot(userId: string | null, jobId: string): () => Promise<void> {
    if (userId === null || !this.leases) return async () => undefined;
    const leases = this.leases;
    const leaseMs = this.config.narrateLockMs;
    const renew = setInterval(
      () => {
        leases.extend(userId, jobId, leaseMs).catch((error: unknown) =>
          this.logger.warn({
            msg: "could not renew the turn's user slot",
            error: describeError(error),
          }),
        );
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    renew.unref();
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      clearInterval(renew);
      await this.releaseSlot(userId, jobId);
    };
  }

  private async releaseSlot(userId: string, jobId: string): Promise<void> {
    if (!this.leases) return;
    try {
      const next = await this.leases.release(userId, jobId);
      // Not awaited: the next turns' wake-up is no part of this one, and a lost wake is only
      // late (the waiter asks again after LINE_RECHECK_MS).
      if (next.length > 0) void this.wake(next).catch(() => undefined);
    } catch (error) {
      // The lease expires by itself within NARRATE_LOCK_MS.
      this.logger.warn({ msg: "could not free the turn's user slot", error: describeError(error) });
    }
  }

  /** Moves waiting jobs from delayed to the queue now (one caught between asking and delaying gets a second try). */
  private async wake(jobIds: string[]): Promise<void> {
    const queue = this.producer.queue(QueueName.Narrate);
    await Promise.all(
      jobIds.map(async (jobId) => {
        for (let round = 0; round < 3; round += 1) {
          try {
            const job = await queue.getJob(jobId);
            if (!job) return;
            const state = await job.getState();
            if (state === 'delayed') return await job.promote();
            if (state !== 'active') return;
          } catch {
            // promoted meanwhile by another worker, or Redis trouble: the recheck covers it
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 100 * (round + 1)));
        }
      }),
    );
  }
}

/**
 * The model client, telling the provider's shared limiter what each narration really cost and
 * pausing every worker's narrations when the provider answers 429.
 */
export function providerLimitedClient(
  client: ModelClient,
  limiter: ProviderLimiter | null,
): ModelClient {
  if (!limiter) return client;
  const logger = new Logger('ProviderLimiter');
  return {
    async *streamNarration(request, signal) {
      try {
        for await (const event of client.streamNarration(request, signal)) {
          if (event.type === 'done') {
            const tokens = event.usage.promptTokens + event.usage.completionTokens;
            limiter.recordUsage(tokens).catch((error: unknown) =>
              logger.warn({
                msg: "could not charge a narration's tokens",
                error: describeError(error),
              }),
            );
          }
          yield event;
        }
      } catch (error) {
        const pauseMs = providerPauseMs(error);
        if (pauseMs !== null) {
          const left = await limiter.pause(pauseMs).catch(() => pauseMs);
          logger.warn({ msg: 'the model provider answered 429: narrations pause', pauseMs: left });
        }
        throw error;
      }
    },
    complete: (request) => client.complete(request),
  };
}

@Injectable()
class AdmissionRedisCloser implements OnApplicationShutdown {
  constructor(@Inject(ADMISSION_REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    await closeRedis(this.redis);
  }
}

export const admissionProviders: Provider[] = [
  {
    provide: ADMISSION_REDIS,
    useFactory: (config: AppConfig) =>
      createCommandConnection(config.redisUrl, 'chronicle-admission', COMMAND_TIMEOUT_MS),
    inject: [WORKER_CONFIG],
  },
  AdmissionRedisCloser,
  {
    provide: PROVIDER_LIMITER,
    useFactory: (redis: Redis, config: AppConfig) =>
      isOfflineConfig({ apiKey: config.modelApiKey })
        ? null
        : new ProviderLimiter(
            redis,
            config.queuePrefix,
            providerIdOf(config.modelBaseUrl, config.modelApiKey),
            {
              requestsPerMinute: config.modelRequestsPerMinute,
              tokensPerMinute: config.modelTokensPerMinute,
              burstSeconds: config.modelLimitBurstSeconds,
            },
          ),
    inject: [ADMISSION_REDIS, WORKER_CONFIG],
  },
  NarrateAdmission,
];
