// How long a turn whose job Redis lost waits before the reconciler has it back in the queue,
// against the bound of twice RECONCILE_INTERVAL_MS (default 5 s). The context worker runs
// in this process with production settings (interval 5 s) on a scratch database and a Redis of
// its own; the offline narrator answers. Two ways to lose a job:
//   1. one at a time, at random moments: a turn appended to the log with no job (the outbox row
//      never existed, as if Redis lost it right after the relay), timed from its commit until its
//      job is in Redis;
//   2. all at once: turns waiting behind a busy worker, then FLUSHALL, timed from the flush until
//      each one's job is back.
import { randomUUID } from 'node:crypto';
import { adventureStreamId, EVENT_SCHEMA_VERSIONS } from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  decideCommand,
  eventIdsFor,
  readModelsOf,
} from '@chronicle/adventure-store';
import { EventStoreRepository, migrateToLatest } from '@chronicle/event-store';
import { JsonLogger, loadConfig } from '@chronicle/platform';
import { QueueName, QueueProducer } from '@chronicle/queue';
import { createTestDatabase, PrivateRedis, testQueuePrefix } from '@chronicle/testing';
import { startContextWorker } from '../apps/context-worker/src/context-worker.bootstrap';
import { NarrateProcessor } from '../apps/context-worker/src/narrate.processor';
import { summarize } from './stats';

const INTERVAL_MS = 5_000;
const SINGLE_SAMPLES = 12;
const FLUSHED_TURNS = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export default async function reconcileBench(): Promise<string> {
  const database = await createTestDatabase('bench_reconcile', { empty: true });
  await migrateToLatest(database.db);
  const redis = await PrivateRedis.start();
  const config = loadConfig({
    DATABASE_URL: database.connectionString,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: testQueuePrefix('bench-reconcile'),
    LOG_LEVEL: 'error',
    RECONCILE_INTERVAL_MS: String(INTERVAL_MS),
    NARRATE_CONCURRENCY: '1',
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
  });
  const app = await startContextWorker(config, new JsonLogger('context-worker', 'error'));
  try {
    const adventures = app.get(AdventureCommandHandler);
    const queue = app.get(QueueProducer).queue(QueueName.Narrate);
    const newAdventure = async (): Promise<string> => {
      const adventureId = randomUUID();
      await adventures.handle(
        adventureId,
        {
          type: 'CreateAdventure',
          data: {
            adventureId,
            ownerId: 'bench',
            openingActionId: randomUUID(),
            title: 'Bench',
            opening: 'The lamp is dark.',
            settings: { model: 'offline-narrator' },
          },
        },
        { actor: 'bench' },
      );
      return adventureId;
    };
    const actWithoutJob = async (adventureId: string): Promise<string> => {
      const turnId = randomUUID();
      const actionId = randomUUID();
      // Decided as the handler would, but appended past it: the handler always writes the job.
      const state = await adventures.get(adventureId);
      const events = decideCommand(
        { type: 'SubmitAction', data: { turnId, inputType: 'do', text: 'look', actionId } },
        state,
      );
      await app.get(EventStoreRepository).appendToStream(
        adventureStreamId(adventureId),
        events.map((event, i) => ({
          id: eventIdsFor(actionId, events.length)[i],
          type: event.type,
          schemaVersion: EVENT_SCHEMA_VERSIONS[event.type],
          data: event.data,
        })),
        { expectedVersion: state.version, readModels: readModelsOf(events, state) },
      );
      return turnId;
    };
    const backAt = async (turnId: string, timeoutMs: number): Promise<number> => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (await queue.getJob(`narrate-${turnId}`)) return Date.now();
        await sleep(10);
      }
      throw new Error(`turn ${turnId}: no job after ${timeoutMs} ms`);
    };

    // 1. one lost job at a time, at moments spread over the interval
    const single: number[] = [];
    for (let i = 0; i < SINGLE_SAMPLES; i++) {
      const adventureId = await newAdventure();
      await sleep(Math.floor(Math.random() * INTERVAL_MS));
      const lostAt = Date.now();
      const turnId = await actWithoutJob(adventureId);
      single.push((await backAt(turnId, 4 * INTERVAL_MS)) - lostAt);
    }

    // 2. a flush with many turns waiting (this worker paused: nothing takes them, so each one is
    //    in flight at the flush and its job is in Redis until then)
    await app.get(NarrateProcessor).worker.pause(true);
    const turns: string[] = [];
    for (let i = 0; i < FLUSHED_TURNS; i++) {
      const adventureId = await newAdventure();
      const turnId = randomUUID();
      const actionId = randomUUID();
      await adventures.handle(
        adventureId,
        {
          type: 'SubmitAction',
          key: actionId,
          data: { turnId, inputType: 'do', text: 'look', actionId },
        },
        { actor: 'bench' },
      );
      turns.push(turnId);
    }
    await Promise.all(turns.map((turnId) => backAt(turnId, INTERVAL_MS)));
    const flushedAt = Date.now();
    await redis.call('FLUSHALL');
    const flushed = await Promise.all(
      turns.map(async (turnId) => (await backAt(turnId, 6 * INTERVAL_MS)) - flushedAt),
    );

    const bound = 2 * INTERVAL_MS;
    const row = (what: string, samples: number[]) => {
      const t = summarize(samples);
      const max = Math.max(...samples);
      return `| ${what} | ${t.samples} | ${(t.p50 / 1000).toFixed(2)} s | ${(max / 1000).toFixed(2)} s | ${(max / INTERVAL_MS).toFixed(2)} × | ${max <= bound ? 'yes' : 'NO'} |`;
    };
    return [
      `### Reconciler: a lost job back in the queue (RECONCILE_INTERVAL_MS ${INTERVAL_MS} ms; bound 2 × interval)`,
      '',
      '| lost how | turns | p50 | max | max ÷ interval | within 2 × interval |',
      '|---|---|---|---|---|---|',
      row('one at a time (no job ever in Redis)', single),
      row(`FLUSHALL with ${FLUSHED_TURNS} turns waiting`, flushed),
    ].join('\n');
  } finally {
    await app.close();
    await redis.destroy();
    await database.drop();
  }
}
