// Faults on the model's side and on ours, through the built apps: rate limits,
// server errors, a stream cut mid-way, a reply with no prose, and a worker
// killed mid-stream. In every case the client ends with one complete
// narration (or a clear error), and the log holds exactly one outcome.
import { AppSystem } from '@chronicle/testing';
import type { RecordedRequest } from '../support/fake-openai-server';
import { ChronicleClient, ofType, type PlayedTurn } from './support/chronicle.client';
import { narration, ScriptedNarrator, type ScriptedReply } from './support/scripted-narrator';

jest.setTimeout(240_000);

const CHAT = '/v1/chat/completions';

let system: AppSystem;
let client: ChronicleClient;
const narrator = new ScriptedNarrator();

beforeAll(async () => {
  system = await AppSystem.start({
    apps: ['api', 'context-worker'],
    env: { NARRATE_ATTEMPTS: '3' },
  });
  system.fake.setDefaultReply(narrator.reply);
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
});

function chatRequests(): RecordedRequest[] {
  return system.fake.requestsTo(CHAT);
}

function newAdventure(): Promise<string> {
  return client.createAdventure({
    title: 'Storm Season',
    opening: 'The storm has kept the ferry in port for a week. You have run out of excuses.',
    placeholders: {},
    storyCards: [],
    settings: { model: 'fake-model' },
  });
}

function expectNarrated(turn: PlayedTurn, reply: ScriptedReply): void {
  expect(turn.stream.outcome).toBe('done');
  const done = turn.stream.final as { action: { text: string } };
  expect(done.action.text).toBe(reply.prose);
  expect([reply.text, reply.prose]).toContain(turn.stream.text.trim());
}

async function narratedFor(adventureId: string, turnId: string) {
  const events = await client.events(adventureId);
  return {
    events,
    narrated: ofType(events, 'Narrated').filter((e) => e.data.turnId === turnId),
    failed: ofType(events, 'NarrationFailed').filter((e) => e.data.turnId === turnId),
  };
}

it('retries a 429 after its Retry-After and then narrates', async () => {
  await system.explainFailure(async () => {
    const adventureId = await newAdventure();
    system.fake.enqueue({
      status: 429,
      retryAfter: 1,
      errorMessage: 'Rate limit reached for requests',
      path: CHAT,
    });
    const before = chatRequests().length;
    const turn = await client.play(adventureId, 'do', 'ask the ferryman when we sail');
    expectNarrated(turn, narrator.last());
    const requests = chatRequests().slice(before);
    expect(requests).toHaveLength(2);
    expect(requests[1].receivedAt - requests[0].receivedAt).toBeGreaterThanOrEqual(900);
    const { narrated, failed } = await narratedFor(adventureId, turn.accepted.turnId);
    expect(narrated).toHaveLength(1);
    expect(failed).toHaveLength(0);
    const status = await client.turn(adventureId, turn.accepted.turnId);
    expect(status.status).toBe(200);
    expect(status.body).toEqual(expect.objectContaining({ status: 'done' }));
  });
});

it('records NarrationFailed after three 500s, ends the stream with error, and unblocks the adventure', async () => {
  await system.explainFailure(async () => {
    const adventureId = await newAdventure();
    for (let i = 0; i < 3; i++) system.fake.enqueue({ status: 500, path: CHAT });
    const before = chatRequests().length;
    const accepted = await client.act(adventureId, 'do', 'pay the harbour fee');
    expect(accepted.status).toBe(202);
    const stream = await client.follow(accepted.body);
    expect(stream.outcome).toBe('error');
    const message = (stream.final as { message?: unknown }).message;
    expect(typeof message).toBe('string');
    expect(message).not.toBe('');
    expect(message).not.toContain('test-key');
    // a provider's 5xx is the stable code model_unreachable, in the stream and in the log
    expect((stream.final as { code?: unknown }).code).toBe('model_unreachable');
    expect(chatRequests().length - before).toBe(3);

    const { narrated, failed } = await narratedFor(adventureId, accepted.body.turnId);
    expect(narrated).toHaveLength(0);
    expect(failed).toHaveLength(1);
    expect(failed[0].data.attempts).toBe(3);
    // NarrationFailed v2 names the plain message `message` (v1 called it `error`).
    expect(failed[0].data.message).toBe(message);
    expect(failed[0].data.code).toBe('model_unreachable');
    expect(failed[0].data.message).not.toContain('test-key');
    const status = await client.turn(adventureId, accepted.body.turnId);
    expect(status.body).toEqual(
      expect.objectContaining({ status: 'failed', code: 'model_unreachable' }),
    );

    // the adventure accepts a new action, and it narrates
    const next = await client.play(adventureId, 'do', 'pay the harbour fee again');
    expectNarrated(next, narrator.last());
  });
});

it('retries a stream cut mid-way; the client resets and ends with the full text', async () => {
  await system.explainFailure(async () => {
    const adventureId = await newAdventure();
    const cut = narration(5000);
    system.fake.enqueue({ text: cut.text, chunks: 6, cutAfterChunks: 3, path: CHAT });
    const before = chatRequests().length;
    const turn = await client.play(adventureId, 'say', 'Is the ferry running tomorrow?');
    expectNarrated(turn, narrator.last());
    expect(turn.stream.resets).toBeGreaterThanOrEqual(1);
    expect(turn.stream.text).not.toContain(cut.marker);
    expect(chatRequests().length - before).toBe(2);
    const { narrated } = await narratedFor(adventureId, turn.accepted.turnId);
    expect(narrated).toHaveLength(1);
    expect(narrated[0].data.action.text).toBe(narrator.last().prose);
  });
});

it('never stores an empty narration: a reply that is only a state block is retried', async () => {
  await system.explainFailure(async () => {
    const adventureId = await newAdventure();
    system.fake.enqueue({
      text: '```state\n{"type":"fact","text":"The ferry stays in port"}\n```',
      chunks: 3,
      path: CHAT,
    });
    const before = chatRequests().length;
    const turn = await client.play(adventureId, 'do', 'wait for the storm to pass');
    expectNarrated(turn, narrator.last());
    expect(chatRequests().length - before).toBe(2);
    const { events, narrated } = await narratedFor(adventureId, turn.accepted.turnId);
    expect(narrated).toHaveLength(1);
    for (const event of ofType(events, 'Narrated')) {
      expect(event.data.action.text.trim()).not.toBe('');
    }
  });
});

it('survives the context worker killed with SIGKILL mid-stream: one Narrated, full text', async () => {
  await system.explainFailure(async () => {
    const adventureId = await newAdventure();
    const slow = narration(6000);
    // about 8 s of streaming: the kill lands well inside it
    system.fake.enqueue({ text: slow.text, chunks: 40, delayMs: 200, path: CHAT });
    const before = chatRequests().length;
    const accepted = await client.act(adventureId, 'do', 'board the ferry in the storm');
    expect(accepted.status).toBe(202);

    const victim = system.process('context-worker');
    let chunks = 0;
    let replacement: Promise<unknown> | undefined;
    const stream = await client.follow(accepted.body, {
      timeoutMs: 150_000,
      onFrame: (frame) => {
        if (frame.event === 'chunk') chunks += 1;
        if (chunks === 3 && !replacement) {
          victim.kill('SIGKILL');
          replacement = victim.waitForExit(10_000).then(() => system.startApp('context-worker'));
        }
      },
    });
    await replacement;
    expect(victim.exit?.signal).toBe('SIGKILL');
    expect(stream.outcome).toBe('done');
    expect(stream.resets).toBeGreaterThanOrEqual(1);
    const reply = narrator.last();
    expect((stream.final as { action: { text: string } }).action.text).toBe(reply.prose);
    expect([reply.text, reply.prose]).toContain(stream.text.trim());
    expect(stream.text).not.toContain(slow.marker);

    const requests = chatRequests().slice(before);
    expect(requests).toHaveLength(2);
    expect(requests[0].aborted).toBe(true);
    const { narrated, failed } = await narratedFor(adventureId, accepted.body.turnId);
    expect(narrated).toHaveLength(1);
    expect(failed).toHaveLength(0);
  });
});
