import { randomBytes, randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestMicroservice } from '@nestjs/common';
import { AccountsRepository } from '@chronicle/accounts';
import { narrationCommand } from '@chronicle/adventure/testing';
import { AdventureCommandHandler } from '@chronicle/adventure-store';
import { JsonLogger, loadConfig } from '@chronicle/platform';
import { QueueName, QueueProducer } from '@chronicle/queue';
import {
  createTestDatabase,
  removeQueueKeys,
  testQueuePrefix,
  TEST_REDIS_URL,
  type TestDatabase,
} from '@chronicle/testing';
import {
  newWebhookSecret,
  WebhookSecretBox,
  WebhooksRepository,
  type DeliveryAttempt,
} from '@chronicle/webhooks';
import { Webhook } from 'standardwebhooks';
import { startMemoryWorker } from './memory-worker.bootstrap';

// Deliveries end to end in the memory worker: a turn's Narrated or NarrationFailed is appended
// through the command handler, the outbox relay enqueues the notify job, and the worker signs
// and POSTs to a real receiver on loopback (private targets allowed for this test), which
// verifies each delivery with the standardwebhooks library.

const SECRET_KEY = randomBytes(32).toString('base64');

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** Answers the request; a receiver that "hangs" never calls it. */
  answer(status: number): void;
  /** The connection closed (answered, or given up by the sender). */
  closed: boolean;
}

let database: TestDatabase;
let prefix: string;
let app: INestMicroservice;
let adventures: AdventureCommandHandler;
let webhooks: WebhooksRepository;
let ownerId: string;
let receiver: Server;
let receiverUrl: string;
const received: Received[] = [];
/** How the receiver answers each request as it arrives; null: it holds the request open. */
let answerWith: (request: number) => number | null = () => 204;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const entry: Received = {
        headers: req.headers,
        body,
        answer: (status: number) => reply(res, status),
        closed: false,
      };
      res.on('close', () => (entry.closed = true));
      received.push(entry);
      const status = answerWith(received.length);
      if (status !== null) entry.answer(status);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  database = await createTestDatabase();
  prefix = testQueuePrefix();
  const config = loadConfig({
    DATABASE_URL: database.connectionString,
    DATABASE_POOL_SIZE: '4',
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    WEBHOOKS_SECRET_KEY: SECRET_KEY,
    WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: 'true',
    WEBHOOKS_ATTEMPTS: '3',
    WEBHOOKS_RETRY_BASE_MS: '100',
    WEBHOOKS_TIMEOUT_MS: '3000',
  });
  app = await startMemoryWorker(config, new JsonLogger('memory-worker', config.logLevel));
  adventures = app.get(AdventureCommandHandler);
  webhooks = app.get(WebhooksRepository);
  ownerId = (await app.get(AccountsRepository).createUser({ name: 'bot owner' })).id;
});

afterAll(async () => {
  for (const entry of received) entry.answer(503);
  await app?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await database?.drop();
  await removeQueueKeys(prefix);
});

beforeEach(() => {
  received.length = 0;
  answerWith = () => 204;
});

// Each test's webhooks go with it: a webhook for all the owner's adventures would hear the next's.
afterEach(async () => {
  for (const webhook of await webhooks.listOwnedBy(ownerId)) {
    await webhooks.delete(ownerId, webhook.id);
  }
});

function reply(res: ServerResponse, status: number): void {
  if (res.writableEnded || res.destroyed) return;
  res.statusCode = status;
  res.end();
}

/** A webhook as the API registers one: its secret sealed; returns the id and the secret. */
async function register(events: string[], adventureId: string | null = null) {
  const id = randomUUID();
  const secret = newWebhookSecret();
  await webhooks.create({
    id,
    userId: ownerId,
    adventureId,
    url: receiverUrl,
    events,
    description: '',
    sealedSecret: new WebhookSecretBox(SECRET_KEY).seal(secret, id),
  });
  return { id, secret };
}

async function anAdventure(): Promise<string> {
  const adventureId = randomUUID();
  await adventures.handle(
    adventureId,
    {
      type: 'CreateAdventure',
      data: {
        adventureId,
        ownerId,
        openingActionId: randomUUID(),
        title: 'Hooks',
        opening: 'The bot waits by the door.',
        persona: { name: 'Ash', pronouns: 'they/them', description: 'A courier.' },
        settings: { autoSummarize: false, memoryBankEnabled: false },
      },
    },
    { actor: 'test' },
  );
  return adventureId;
}

/** One turn through the command handler; returns its id once its end is appended. */
async function turn(adventureId: string, ends: 'narrated' | 'failed' = 'narrated') {
  const turnId = randomUUID();
  await adventures.handle(
    adventureId,
    {
      type: 'SubmitAction',
      data: { turnId, inputType: 'do', text: 'knock', actionId: randomUUID() },
    },
    { actor: 'test' },
  );
  await adventures.handle(
    adventureId,
    ends === 'narrated'
      ? narrationCommand(turnId, randomUUID(), { text: 'The door opens.' })
      : {
          type: 'RecordNarrationFailure',
          data: { turnId, error: 'model unreachable', attempts: 3 },
        },
    { actor: 'test' },
  );
  return turnId;
}

async function until<T>(what: string, read: () => Promise<T> | T, done: (value: T) => boolean) {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const attemptsOf = (webhookId: string) =>
  webhooks.attempts(webhookId, 100).then((rows) => [...rows].reverse());

describe('webhook deliveries', () => {
  it('given a turn narrated, then its webhook gets one signed POST the standardwebhooks verifier accepts, recorded as delivered', async () => {
    const adventureId = await anAdventure();
    const { id, secret } = await register(['turn.narrated']);
    const turnId = await turn(adventureId);

    await until(
      'the delivery',
      () => received.length,
      (n) => n >= 1,
    );
    const [delivery] = received;
    const verified = new Webhook(secret).verify(
      delivery.body,
      delivery.headers as Record<string, string>,
    );
    expect(verified).toMatchObject({
      type: 'turn.narrated',
      data: { adventureId, turnId, actionId: expect.any(String) },
    });
    expect(delivery.headers['webhook-id']).toBe(`msg_${turnId}_narrated`);
    expect(() =>
      new Webhook(newWebhookSecret()).verify(
        delivery.body,
        delivery.headers as Record<string, string>,
      ),
    ).toThrow();

    const [attempt] = await until(
      'the record',
      () => attemptsOf(id),
      (rows) => rows.length >= 1,
    );
    expect(attempt).toMatchObject<Partial<DeliveryAttempt>>({
      messageId: `msg_${turnId}_narrated`,
      event: 'turn.narrated',
      attempt: 1,
      status: 'delivered',
      responseStatus: 204,
      nextAttemptAt: null,
    });
  });

  it('given a receiver that answers 500 twice, then the delivery is retried with backoff, each attempt recorded, the third delivered', async () => {
    const adventureId = await anAdventure();
    const { id, secret } = await register(['turn.failed']);
    answerWith = (n) => (n <= 2 ? 500 : 200);
    const turnId = await turn(adventureId, 'failed');

    const rows = await until(
      'three attempts',
      () => attemptsOf(id),
      (r) => r.length >= 3,
    );
    expect(rows.map((row) => [row.attempt, row.status, row.responseStatus])).toEqual([
      [1, 'retrying', 500],
      [2, 'retrying', 500],
      [3, 'delivered', 200],
    ]);
    // the recorded next attempt is the backoff's: 100 ms, then 200 ms after the failed one
    expect(rows[0].nextAttemptAt!.getTime() - rows[0].attemptedAt.getTime()).toBeGreaterThanOrEqual(
      90,
    );
    expect(rows[1].nextAttemptAt!.getTime() - rows[1].attemptedAt.getTime()).toBeGreaterThanOrEqual(
      190,
    );
    // one message: the same id on every attempt, each signed afresh and verifiable
    expect(new Set(received.map((r) => r.headers['webhook-id']))).toEqual(
      new Set([`msg_${turnId}_failed`]),
    );
    for (const r of received) {
      expect(new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).toMatchObject(
        {
          type: 'turn.failed',
          data: { turnId, code: expect.any(String) },
        },
      );
    }
  });

  it('given a receiver that always answers 500, then the last attempt is recorded as failed with no next attempt', async () => {
    const adventureId = await anAdventure();
    const { id } = await register(['turn.narrated'], adventureId);
    answerWith = () => 500;
    await turn(adventureId);

    const rows = await until(
      'three attempts',
      () => attemptsOf(id),
      (r) => r.length >= 3,
    );
    expect(rows.map((row) => row.status)).toEqual(['retrying', 'retrying', 'failed']);
    expect(rows[2].nextAttemptAt).toBeNull();
  });

  it('given a receiver that never answers, then turns go on being appended while its delivery hangs', async () => {
    const adventureId = await anAdventure();
    await register(['turn.narrated'], adventureId);
    answerWith = () => null;
    await turn(adventureId);
    await until(
      'the hanging delivery',
      () => received.length,
      (n) => n >= 1,
    );

    // The receiver holds the first delivery open; the next turns append all the same, and
    // finish while it is still open (a delivery inline in the append would have waited for it
    // to time out and close first).
    await turn(adventureId);
    await turn(adventureId);
    expect((await adventures.get(adventureId)).inFlight).toBeNull();
    expect(received[0].closed).toBe(false);
    for (const r of received) r.answer(204);
  });

  it('given webhooks of other scopes and events, then only the ones that asked are told, and a deleted one is not', async () => {
    const adventureId = await anAdventure();
    const other = await anAdventure();
    const scoped = await register(['turn.narrated'], other);
    const failedOnly = await register(['turn.failed']);
    const everywhere = await register(['turn.narrated']);
    const deleted = await register(['turn.narrated']);
    await webhooks.delete(ownerId, deleted.id);

    const turnId = await turn(adventureId);
    // the notify job enqueues every delivery before it completes, and it made one
    const queue = app.get(QueueProducer).queue(QueueName.Webhooks);
    const notifyId = `webhooks-msg_${turnId}_narrated`;
    await until(
      'the notify job',
      () => queue.getJobState(notifyId),
      (state) => state === 'completed',
    );
    expect((await queue.getJob(notifyId))?.returnvalue).toEqual({ deliveries: 1 });
    await until(
      'the delivery',
      () => attemptsOf(everywhere.id),
      (rows) => rows.length >= 1,
    );
    expect(await attemptsOf(scoped.id)).toEqual([]);
    expect(await attemptsOf(failedOnly.id)).toEqual([]);
    expect(await attemptsOf(deleted.id)).toEqual([]);
  });
});
