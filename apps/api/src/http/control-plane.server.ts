import { type MicroserviceOptions, ServerRedis, type RedisOptions } from '@nestjs/microservices';
import { controlPlaneTransport } from '@chronicle/platform';

/** Delay between reconnects of the control plane's subscriber after Redis went away. */
const RECONNECT_DELAY_MS = 1_000;

/**
 * The control plane's Redis server, hardened for Redis going away: it reconnects instead of
 * giving up for good (Nest's default without `retryAttempts`), and closing it while Redis is
 * down disconnects instead of waiting on — or throwing from — a QUIT that cannot be sent,
 * so the API still shuts down cleanly. (Belongs in libs/platform's controlPlaneTransport.)
 */
export class ControlPlaneServer extends ServerRedis {
  override async close(): Promise<void> {
    this.isManuallyClosed = true;
    for (const client of [this.pubClient, this.subClient]) {
      if (!client) continue;
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    }
  }
}

export function controlPlaneServer(redisUrl: string): MicroserviceOptions {
  const { options } = controlPlaneTransport(redisUrl) as RedisOptions;
  return {
    strategy: new ControlPlaneServer({
      ...options,
      retryAttempts: Number.MAX_SAFE_INTEGER,
      retryDelay: RECONNECT_DELAY_MS,
    }),
  };
}
