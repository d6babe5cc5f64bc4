// The context worker booted in-process against the real Postgres, Redis and BullMQ, with a
// per-file database and queue prefix, plus the few moves a test makes in the API's place:
// create an adventure, submit an action with its narrate outbox row, cancel a turn. A narrate
// spec sets up the fake model and the worker together with setUpNarrateSpec.
import { randomUUID } from 'node:crypto';
import type { INestMicroservice } from '@nestjs/common';
import {
  adventureStreamId,
  EVENT_SCHEMA_VERSIONS,
  type AdventureState,
  type CreateAdventure,
  type InputType,
} from '@chronicle/adventure';
import {
  AdventureCommandHandler,
  decideCommand,
  eventIdsFor,
  readModelsOf,
} from '@chronicle/adventure-store';
import { EventStoreRepository, type StoredEvent } from '@chronicle/event-store';
import { ControlPlane, JsonLogger, loadConfig, type AppConfig } from '@chronicle/platform';
import { QueueProducer } from '@chronicle/queue';
import { TurnStreamPublisher, type TurnStreamEntry } from '@chronicle/turn-stream';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import {
  startFakeOpenAiServer,
  type FakeOpenAiServer,
  type FakeOpenAiServerOptions,
} from '../../../../test/support/fake-openai-server';
import { startContextWorker } from '../context-worker.bootstrap';

export interface WorkerHarness {
  app: INestMicroservice;
  config: AppConfig;
  adventures: AdventureCommandHandler;
  events: EventStoreRepository;
  stream: TurnStreamPublisher;
  producer: QueueProducer;
  controlPlane: ControlPlane;
  database: TestDatabase;
  /** Stops the worker; the owner of the database and prefix also removes them. */
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Share another harness's database and queue prefix (a second worker of one installation). */
  sharing?: WorkerHarness;
}

export async function startWorkerHarness(
  env: Record<string, string> = {},
  options: HarnessOptions = {},
): Promise<WorkerHarness> {
  const shared = options.sharing;
  const database: TestDatabase = shared ? shared.database : await createTestDatabase();
  const prefix = shared ? shared.config.queuePrefix : testQueuePrefix();
  const config = loadConfig({
    DATABASE_URL: database.connectionString,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'error',
    NARRATE_LOCK_MS: '2000',
    OUTBOX_SWEEP_INTERVAL_MS: '500',
    SHUTDOWN_TIMEOUT_MS: '5000',
    // its /metrics on any free loopback port: test files (and harnesses) run side by side
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    ...env,
  });
  const app = await startContextWorker(config, new JsonLogger('context-worker', config.logLevel));
  return {
    app,
    config,
    adventures: app.get(AdventureCommandHandler),
    events: app.get(EventStoreRepository),
    stream: app.get(TurnStreamPublisher),
    producer: app.get(QueueProducer),
    controlPlane: app.get(ControlPlane),
    database,
    close: async () => {
      // A test may have stopped the worker itself (a shutdown test). Closing again is safe: Nest
      // runs the shutdown hooks once and only closes the (idempotent) control-plane transport
      // again. (Wrapping app.close to notice would not work: Nest's app proxy ignores writes.)
      await app.close();
      if (shared) return;
      await database.drop();
      await removeQueueKeys(prefix);
    },
  };
}

/** The fake model server a narrate spec's worker calls. */
export type FakeModel = FakeOpenAiServer & { baseURL: string };

export interface NarrateSpecOptions {
  /** The fake model's options; `false`: no fake model, so the built-in offline narrator answers. */
  fake?: FakeOpenAiServerOptions | false;
  /**
   * The worker's settings over the fake model's address and a test key. A function when they
   * depend on what an earlier beforeAll started (a Redis of the test's own).
   */
  env?: Record<string, string> | (() => Record<string, string>);
}

/** What a narrate spec's tests use; read inside the tests, once the beforeAll has run. */
export interface NarrateSpec {
  readonly fake: FakeModel;
  readonly harness: WorkerHarness;
  /** The settings the worker started with: a second worker of the installation takes them. */
  readonly env: Record<string, string>;
}

/**
 * The set-up every narrate spec shares, as jest hooks of the file (or describe) that calls it:
 * before all, the fake model server and a worker calling it; before each test, the fake's queue
 * and record emptied; after all, the worker and then the fake closed. Hooks run in the order
 * they are declared: a spec's own beforeAll that needs the worker, or afterAll that must run
 * after it is closed, is declared after this call; one the worker needs first, before it.
 */
export function setUpNarrateSpec(options: NarrateSpecOptions = {}): NarrateSpec {
  let fake: FakeModel | undefined;
  let harness: WorkerHarness | undefined;
  let env: Record<string, string> | undefined;
  beforeAll(async () => {
    if (options.fake !== false) fake = await startFakeOpenAiServer(options.fake);
    env = {
      ...(fake
        ? { MODEL_BASE_URL: fake.baseURL, MODEL_API_KEY: 'sk-test-narrate-0123456789' }
        : { MODEL_API_KEY: '' }),
      ...(typeof options.env === 'function' ? options.env() : options.env),
    };
    harness = await startWorkerHarness(env);
  });
  beforeEach(() => fake?.clear());
  afterAll(async () => {
    await harness?.close();
    await fake?.close();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the narrate spec has no ${what}: read it in a test`);
    return value;
  };
  return {
    get fake() {
      return started(fake, 'fake model');
    },
    get harness() {
      return started(harness, 'worker');
    },
    get env() {
      return started(env, 'worker settings');
    },
  };
}

export async function createAdventure(
  harness: WorkerHarness,
  data: Partial<CreateAdventure['data']> = {},
): Promise<string> {
  const adventureId = randomUUID();
  await harness.adventures.handle(
    adventureId,
    {
      type: 'CreateAdventure',
      data: {
        adventureId,
        ownerId: 'owner-1',
        openingActionId: randomUUID(),
        title: 'The Lighthouse',
        opening: 'You stand on the harbor wall at dusk. The lamp above has gone dark.',
        plotEssentials: 'The keeper vanished a week ago.',
        storyCards: [
          { id: 'card-mira', name: 'Mira', keys: 'mira, keeper', entry: 'Mira keeps the light.' },
        ],
        settings: { model: 'fake-model' },
        ...data,
      },
    },
    { actor: 'test' },
  );
  return adventureId;
}

/** What the API does for `POST …/actions`: PlayerActed plus the narrate job in the outbox. */
export async function act(
  harness: WorkerHarness,
  adventureId: string,
  inputType: InputType,
  text: string,
): Promise<{ turnId: string; actionId: string; version: number }> {
  const turnId = randomUUID();
  const actionId = randomUUID();
  const handled = await harness.adventures.handle(
    adventureId,
    { type: 'SubmitAction', key: actionId, data: { turnId, inputType, text, actionId } },
    { actor: 'test' },
  );
  await harness.stream.publish(turnId, 'player', {
    action: { id: actionId, type: inputType, text },
  });
  return { turnId, actionId, version: handled.state.version };
}

/** An action whose narrate job never reached Redis (no outbox row): the log only. */
export async function actWithoutJob(
  harness: WorkerHarness,
  adventureId: string,
  text: string,
): Promise<{ turnId: string; actionId: string }> {
  const turnId = randomUUID();
  const actionId = randomUUID();
  // Decided as the handler would, but appended past it: the handler always writes the job.
  const state = await harness.adventures.get(adventureId);
  const events = decideCommand(
    { type: 'SubmitAction', data: { turnId, inputType: 'do', text, actionId } },
    state,
  );
  await harness.events.appendToStream(
    adventureStreamId(adventureId),
    events.map((event, i) => ({
      id: eventIdsFor(actionId, events.length)[i],
      type: event.type,
      schemaVersion: EVENT_SCHEMA_VERSIONS[event.type],
      data: event.data,
      metadata: { actor: 'test' },
    })),
    { expectedVersion: state.version, readModels: readModelsOf(events, state) },
  );
  return { turnId, actionId };
}

/** What the API does for `POST …/turns/:turnId/cancel`. */
export async function cancel(
  harness: WorkerHarness,
  adventureId: string,
  turnId: string,
): Promise<void> {
  await harness.adventures.handle(
    adventureId,
    { type: 'CancelTurn', data: { turnId } },
    {
      actor: 'test',
    },
  );
  await harness.stream.publish(turnId, 'error', {
    code: 'cancelled',
    message: 'cancelled',
    cancelled: true,
  });
  await harness.controlPlane.cancelTurn(adventureId, turnId);
}

/** Polls the log until the turn is no longer in flight; returns the projection then. */
export async function waitForTurnEnd(
  harness: WorkerHarness,
  adventureId: string,
  turnId: string,
  timeoutMs = 20_000,
): Promise<AdventureState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await harness.adventures.get(adventureId);
    if (state.inFlight?.turnId !== turnId) return state;
    if (Date.now() > deadline)
      throw new Error(`turn ${turnId} still in flight after ${timeoutMs} ms`);
    await sleep(50);
  }
}

export async function readEvents(
  harness: WorkerHarness,
  adventureId: string,
): Promise<StoredEvent[]> {
  return harness.events.readStream(adventureStreamId(adventureId));
}

/** The turn stream's entries once it holds a final one (done or error). */
export async function finishedStream(
  harness: WorkerHarness,
  turnId: string,
  timeoutMs = 5_000,
): Promise<TurnStreamEntry[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entries = await harness.stream.entries(turnId);
    if (entries.some((e) => e.event === 'done' || e.event === 'error')) return entries;
    if (Date.now() > deadline) {
      throw new Error(`turn stream ${turnId} has no final entry: ${JSON.stringify(entries)}`);
    }
    await sleep(25);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
