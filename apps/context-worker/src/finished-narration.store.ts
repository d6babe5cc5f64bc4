// A narration the model finished whose Narrated could not be appended yet (Postgres unreachable):
// kept in Redis under the turn, so the run after the outage records it instead of paying for a
// second model call and showing the player a different take. Best effort both ways: a reply that
// cannot be kept (Redis down too) or is gone (Redis lost its data) costs a new model call, never
// a wrong narration.
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Keyed, ModelCallUsage, RecordNarration } from '@chronicle/adventure';
import type { CommandMetadata } from '@chronicle/adventure-store';
import { describeError, redisKeys, type AppConfig, type RedisClient } from '@chronicle/platform';
import { TURN_STREAM_REDIS } from '@chronicle/turn-stream';
import { WORKER_CONFIG } from './worker-config.token';

/** Everything recording a finished narration needs: no model output is recomputed. */
export interface FinishedNarration {
  turnId: string;
  /**
   * The stream version the prompt was built on: the narration is reused only on that version
   * (a change since is one the model did not see). Its state block is judged when it is
   * recorded, by the decider, on the state it is appended to.
   */
  version: number;
  /** The fencing token of the attempt that finished it, for the operator's log. */
  producedBy: string;
  command: Keyed<RecordNarration>;
  /** The append's metadata, less the job and attempt of the run that records it. */
  meta: CommandMetadata;
  /** The model's prose as streamed (the `done` frame's text); the command holds what onOutput made. */
  prose: string;
  /** The model calls the narration pays for, onto the owner's daily counter. */
  usages: ModelCallUsage[];
  /** What the `narrated` log line reports. */
  summary: Record<string, unknown>;
}

@Injectable()
export class FinishedNarrationStore {
  private readonly logger = new Logger('FinishedNarration');

  constructor(
    @Inject(TURN_STREAM_REDIS) private readonly redis: RedisClient,
    @Inject(WORKER_CONFIG) private readonly config: AppConfig,
  ) {}

  private key(turnId: string): string {
    return redisKeys.finishedNarration(this.config.queuePrefix, turnId);
  }

  /** Keeps it for as long as the turn may stay in flight. */
  async keep(finished: FinishedNarration): Promise<void> {
    try {
      await this.redis.set(
        this.key(finished.turnId),
        JSON.stringify(finished),
        'PX',
        this.config.narrateTurnDeadlineMs,
      );
      this.logger.warn({
        msg: 'the finished narration is kept until it can be recorded',
        version: finished.version,
      });
    } catch (error) {
      this.logger.warn({
        msg: 'could not keep the finished narration; the next run calls the model again',
        error: describeError(error),
      });
    }
  }

  /** The narration kept for this turn at this version, or null (none, another version, unreadable). */
  async find(turnId: string, version: number): Promise<FinishedNarration | null> {
    const text = await this.redis.get(this.key(turnId)).catch(() => null);
    if (!text) return null;
    try {
      const kept = JSON.parse(text) as FinishedNarration;
      return kept.turnId === turnId && kept.version === version ? kept : null;
    } catch {
      return null;
    }
  }

  /** Once it is recorded (or the turn ended otherwise). */
  async forget(turnId: string): Promise<void> {
    await this.redis.del(this.key(turnId)).catch(() => undefined);
  }
}
