import { Inject, Injectable } from '@nestjs/common';
import { RateLimitedError } from '@chronicle/accounts';
import type { AppConfig } from '@chronicle/platform';
import { APP_CONFIG } from '../app-config.token';

/** How long a client refused a stream is asked to wait: streams end when their turn does. */
const STREAM_RETRY_AFTER_SECONDS = 5;

/**
 * The turn streams (SSE) this API instance holds open: at most SSE_MAX_PER_KEY per API key and
 * SSE_MAX_CONNECTIONS in all. Counted in memory, so the caps are per instance: a stream is a
 * connection to this process, and it is this process's sockets and memory they bound.
 */
@Injectable()
export class StreamSlots {
  private readonly byKey = new Map<string, number>();
  private open = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Takes a slot for `keyId`, or refuses (429); the answer frees it, once. */
  acquire(keyId: string): () => void {
    const held = this.byKey.get(keyId) ?? 0;
    if (held >= this.config.sseMaxPerKey) {
      throw new RateLimitedError(
        `this API key already holds ${held} turn streams open (SSE_MAX_PER_KEY is ${this.config.sseMaxPerKey}); close one, or wait for a turn to finish`,
        STREAM_RETRY_AFTER_SECONDS,
      );
    }
    if (this.open >= this.config.sseMaxConnections) {
      throw new RateLimitedError(
        `this server holds as many turn streams as it may (SSE_MAX_CONNECTIONS is ${this.config.sseMaxConnections}); try again shortly`,
        STREAM_RETRY_AFTER_SECONDS,
      );
    }
    this.byKey.set(keyId, held + 1);
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const left = (this.byKey.get(keyId) ?? 1) - 1;
      if (left > 0) this.byKey.set(keyId, left);
      else this.byKey.delete(keyId);
    };
  }

  get openCount(): number {
    return this.open;
  }
}
