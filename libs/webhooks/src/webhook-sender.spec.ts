import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { sendSigned } from './webhook-sender';
import { newWebhookSecret, signedRequest } from './webhook-signing';
import { WebhookTargetError } from './webhook-target';

// A real receiver on loopback; the sender's resolver is a test's, so a name can be made to
// answer one address at the check and the connection shown to go to that one.

let server: Server;
let port: number;
const seen: Array<{ host: string | undefined; body: string; headers: IncomingMessage['headers'] }> =
  [];
let answer = 204;
let hang = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ host: req.headers.host, body, headers: req.headers });
      if (hang) return;
      res.statusCode = answer;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen.length = 0;
  answer = 204;
  hang = false;
});

const message = () => ({
  id: 'msg_t1_narrated',
  type: 'turn.narrated',
  timestamp: new Date(),
  data: { adventureId: 'a1', turnId: 't1' },
});

describe('sendSigned', () => {
  it('given a name the check resolved to loopback, then it connects there, keeping the Host, and the receiver verifies the signature', async () => {
    const secret = newWebhookSecret();
    const result = await sendSigned(
      `http://bot.test:${port}/hook`,
      signedRequest(secret, message()),
      {
        allowPrivate: true,
        timeoutMs: 2_000,
        lookup: async () => [{ address: '127.0.0.1', family: 4 }],
      },
    );
    expect(result).toMatchObject({ answered: true, status: 204 });
    expect(seen).toHaveLength(1);
    expect(seen[0].host).toBe(`bot.test:${port}`);
    const headers = seen[0].headers as Record<string, string>;
    expect(new Webhook(secret).verify(seen[0].body, headers)).toMatchObject({
      type: 'turn.narrated',
    });
  });

  it('given a name that resolves inside now and private targets are not allowed, then nothing is sent', async () => {
    await expect(
      sendSigned(`http://bot.test:${port}/hook`, signedRequest(newWebhookSecret(), message()), {
        allowPrivate: false,
        timeoutMs: 2_000,
        lookup: async () => [{ address: '127.0.0.1', family: 4 }],
      }),
    ).rejects.toBeInstanceOf(WebhookTargetError);
    expect(seen).toHaveLength(0);
  });

  it('given a receiver that answers 500, then the answer is reported, not thrown', async () => {
    answer = 500;
    const result = await sendSigned(
      `http://127.0.0.1:${port}/`,
      signedRequest(newWebhookSecret(), message()),
      {
        allowPrivate: true,
        timeoutMs: 2_000,
      },
    );
    expect(result).toMatchObject({ answered: true, status: 500 });
  });

  it('given a receiver that never answers, then the attempt ends unanswered at its timeout', async () => {
    hang = true;
    const result = await sendSigned(
      `http://127.0.0.1:${port}/`,
      signedRequest(newWebhookSecret(), message()),
      {
        allowPrivate: true,
        timeoutMs: 200,
      },
    );
    expect(result).toMatchObject({
      answered: false,
      error: expect.stringMatching(/no answer within 200 ms/),
    });
  });
});
