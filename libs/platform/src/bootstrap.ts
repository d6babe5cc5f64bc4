import type { INestApplicationContext } from '@nestjs/common';
import { stopTracing } from '@chronicle/telemetry';
import { ConfigError, loadConfig, type AppConfig } from './config';
import { JsonLogger } from './logger';
import { ensureServices, ServiceUnavailableError } from './preflight';

// Every app starts the same way: validate configuration, make sure Postgres
// and Redis answer, migrate (under an advisory lock, so three processes
// starting together do not race), then boot Nest. A failure before Nest is up
// is one readable line and a non-zero exit, never a stack-trace wall.

export interface ProcessSpec {
  app: 'api' | 'context-worker' | 'memory-worker';
  /**
   * Brings the database's schema up to date (libs/event-store's `migrateDatabase`): the app
   * hands it in, so this library stays below the adapters it starts.
   */
  migrate: (databaseUrl: string) => Promise<void>;
  start: (config: AppConfig, logger: JsonLogger) => Promise<INestApplicationContext>;
}

export async function runProcess(spec: ProcessSpec): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${spec.app}: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const logger = new JsonLogger(spec.app, config.logLevel);
  try {
    const redis = await ensureServices(config);
    // Not fatal here: the process starts, /health answers 503 naming the problem, and the
    // operator sees why in the log of every app.
    if (redis.problem) logger.event('error', redis.problem, { check: 'redis-settings' });
    for (const warning of redis.warnings) {
      logger.event('warn', warning, { check: 'redis-settings' });
    }
    await spec.migrate(config.databaseUrl);
  } catch (error) {
    if (error instanceof ServiceUnavailableError) {
      process.stderr.write(`${spec.app}: ${error.message}\n`);
      process.exit(69); // EX_UNAVAILABLE
    }
    logger.event('error', 'start-up failed', { error: describeError(error) });
    process.exit(1);
  }

  let app: INestApplicationContext;
  try {
    app = await spec.start(config, logger);
  } catch (error) {
    // A port in use, a provider that cannot start: one readable line, not a stack-trace wall.
    logger.event('error', 'start-up failed', { error: describeError(error) });
    process.exit(1);
  }
  installShutdown(app, config.shutdownTimeoutMs, logger);
  logger.event('info', `${spec.app} ready`, {
    narrator: config.modelApiKey ? 'remote' : 'offline',
    pid: process.pid,
  });
}

/**
 * Nest's enableShutdownHooks() re-raises the signal after closing, which ends
 * the process with a non-zero status; a clean stop should exit 0, so the apps
 * install this instead (app.close() runs the same lifecycle hooks).
 *
 * On SIGTERM or SIGINT: close the app (HTTP stops accepting, workers finish or
 * release their jobs, connections close) and exit 0. A bound guarantees the
 * exit: a job still running at the deadline is released to another worker by
 * BullMQ's stalled-job check, so nothing is lost by leaving.
 */
function installShutdown(
  app: INestApplicationContext,
  timeoutMs: number,
  logger: JsonLogger,
): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.event('info', 'shutting down', { signal });
    const deadline = setTimeout(() => {
      logger.event('warn', 'shutdown deadline reached; leaving in-flight work to other workers', {
        timeoutMs,
      });
      process.exit(0);
    }, timeoutMs);
    deadline.unref();
    app
      .close()
      // The last spans (this stop's included) reach the collector before the exit.
      .then(() => stopTracing())
      .then(() => {
        logger.event('info', 'stopped');
        process.exit(0);
      })
      .catch((error: unknown) => {
        logger.event('error', 'shutdown failed', { error: describeError(error) });
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
