import { randomUUID } from 'node:crypto';
import { AccountsRepository } from '@chronicle/accounts';
import { deterministicEventId } from '@chronicle/adventure-store';
import { modelReply } from '@chronicle/adventure/testing';
import { TurnStreamPublisher } from '@chronicle/turn-stream';
import { aScenario, startApiHarness, type ApiHarness } from './api.harness';

// GET /v1/adventures/:id/stream over real HTTP: the room's frames from the log, each turn's own
// frames between its start and its end, resumable with Last-Event-ID, one room's only.

let api: ApiHarness;

beforeAll(async () => {
  api = await startApiHarness();
});

const opened: RoomFollower[] = [];

afterEach(() => {
  for (const follower of opened.splice(0)) follower.close();
});

afterAll(async () => {
  await api?.close();
});

interface Frame {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** One SSE connection to a room's stream, its frames gathered as they come. */
class RoomFollower {
  readonly frames: Frame[] = [];
  status = 0;
  private readonly aborter = new AbortController();
  private waiters: Array<() => void> = [];
  readonly done: Promise<void>;

  constructor(url: string, headers: Record<string, string>) {
    this.done = this.read(url, headers).catch(() => undefined);
  }

  private async read(url: string, headers: Record<string, string>): Promise<void> {
    const response = await fetch(url, { headers, signal: this.aborter.signal });
    this.status = response.status;
    this.wake();
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(': ');
          if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 2);
        }
        if (fields.event) {
          this.frames.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
          this.wake();
        }
      }
    }
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Waits (at most 10 s) until a frame matches; returns the frames up to it. */
  async until(matches: (frame: Frame) => boolean): Promise<Frame[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const at = this.frames.findIndex(matches);
      if (at >= 0) return this.frames.slice(0, at + 1);
      if (Date.now() > deadline) {
        throw new Error(`no such frame; got ${JSON.stringify(this.frames.map((f) => f.event))}`);
      }
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  close(): void {
    this.aborter.abort();
  }
}

function follow(adventureId: string, options: { key?: string; lastEventId?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? api.apiKey}` };
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  const follower = new RoomFollower(`${api.baseUrl}/v1/adventures/${adventureId}/stream`, headers);
  opened.push(follower);
  return follower;
}

async function newAdventure(): Promise<string> {
  const reply = await api.request('POST', '/v1/adventures', aScenario());
  expect(reply.status).toBe(201);
  return reply.body.id;
}

async function join(adventureId: string, userId: string, name: string): Promise<void> {
  const code = `code-${randomUUID().slice(0, 8)}`;
  const now = new Date().toISOString();
  await api.adventures.handle(
    adventureId,
    { type: 'CreateInvite', data: { code, role: 'player', now } },
    { actor: api.userId },
  );
  await api.adventures.handle(
    adventureId,
    { type: 'JoinRoom', data: { code, userId, character: { name }, now } },
    { actor: userId },
  );
}

/** A turn as the worker plays it: chunks on its stream, Narrated in the log, then `done`. */
async function narrate(adventureId: string, turnId: string, chunks: string[]): Promise<void> {
  const stream = api.app.get(TurnStreamPublisher);
  for (const text of chunks) await stream.publish(turnId, 'chunk', { text });
  const actionId = randomUUID();
  const text = chunks.join('');
  const { state } = await api.adventures.handle(
    adventureId,
    {
      type: 'RecordNarration',
      key: deterministicEventId(turnId, 'narrated'),
      data: {
        turnId,
        actionId,
        text,
        reply: modelReply(text, []),
        usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 0 },
        model: 'offline-narrator',
        narrator: 'offline',
        finishReason: 'stop',
        contextManifest: {},
        latencyMs: 2,
      },
    },
    { actor: 'worker:context' },
  );
  await stream.publish(turnId, 'done', {
    action: { id: actionId, text, type: 'ai' },
    turnId,
    version: state.version,
  });
}

async function act(adventureId: string, text: string) {
  const reply = await api.request('POST', `/v1/adventures/${adventureId}/actions`, {
    type: 'do',
    text,
  });
  expect(reply.status).toBe(202);
  return reply.body as { turnId: string; actionId: string };
}

const seen = (frames: Frame[]) => frames.map((frame) => frame.event);

describe('GET /v1/adventures/:id/stream', () => {
  it('given two followers of a room and one of another, when a member joins and a turn is narrated, then both followers get joined, turn-started, the chunks and done naming its actions, and the other room none of it', async () => {
    const room = await newAdventure();
    const other = await newAdventure();
    const first = follow(room);
    const second = follow(room);
    const elsewhere = follow(other);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([first.status, second.status, elsewhere.status]).toEqual([200, 200, 200]);

    const mira = randomUUID();
    await join(room, mira, 'Mira');
    const turn = await act(room, 'Ring the bell');
    await narrate(room, turn.turnId, ['The bell ', 'tolls.']);
    const otherTurn = await act(other, 'Open the door');
    await narrate(other, otherTurn.turnId, ['It creaks.']);

    for (const follower of [first, second]) {
      const frames = await follower.until((frame) => frame.event === 'done');
      expect(seen(frames)).toEqual(['joined', 'turn-started', 'player', 'chunk', 'chunk', 'done']);
      expect(frames[0].data).toMatchObject({ userId: mira, character: { name: 'Mira' } });
      expect(frames[1].data).toMatchObject({
        turnId: turn.turnId,
        actions: [{ id: turn.actionId }],
      });
      expect(frames[5].data).toMatchObject({
        turnId: turn.turnId,
        roundId: null,
        actionIds: [turn.actionId],
      });
    }
    const theirs = await elsewhere.until((frame) => frame.event === 'done');
    expect(seen(theirs)).toEqual(['turn-started', 'player', 'chunk', 'done']);
    expect(JSON.stringify(theirs)).not.toContain(turn.turnId);
    expect(JSON.stringify(theirs)).not.toContain('bell');
    for (const follower of [first, second, elsewhere]) follower.close();
  });

  it('given a follower that drops mid-turn, when it reconnects with Last-Event-ID, then its frames across both connections are those of a follower that never dropped: nothing missed, nothing repeated', async () => {
    const room = await newAdventure();
    const steady = follow(room);
    const dropping = follow(room);
    await new Promise((resolve) => setTimeout(resolve, 500));

    const turn = await act(room, 'Climb the stair');
    const stream = api.app.get(TurnStreamPublisher);
    await stream.publish(turn.turnId, 'chunk', { text: 'Step ' });
    const before = await dropping.until((frame) => frame.event === 'chunk');
    dropping.close();
    await dropping.done;

    await stream.publish(turn.turnId, 'chunk', { text: 'by step.' });
    await join(room, randomUUID(), 'Ash');
    await narrate(room, turn.turnId, [' At the top.']);
    await join(room, randomUUID(), 'Bo');

    const resumed = follow(room, { lastEventId: before[before.length - 1].id });
    const all = await steady.until(
      (frame) =>
        frame.event === 'joined' && (frame.data.character as { name: string }).name === 'Bo',
    );
    const after = await resumed.until(
      (frame) =>
        frame.event === 'joined' && (frame.data.character as { name: string }).name === 'Bo',
    );
    const key = (frame: Frame) => `${frame.event} ${JSON.stringify(frame.data)}`;
    expect([...before, ...after].map(key).sort()).toEqual(all.map(key).sort());
    expect(new Set([...before, ...after].map((frame) => frame.id)).size).toBe(all.length);
    expect(seen(after)).toContain('done');
    steady.close();
    resumed.close();
  });

  it('given a round room, when two players submit over HTTP and the last one closes the round, then a follower sees submitted twice, round-closed with its turn, turn-started naming the round and each actor, the next round opened, the chunks and done naming the round; no submission text before the turn', async () => {
    const room = await newAdventure();
    const accounts = api.app.get(AccountsRepository);
    const mira = await accounts.createUser({ name: 'mira' });
    const miraKey = (await accounts.createKey(mira.id))!.key;
    await join(room, mira.id, 'Mira');
    const policy = await api.request('PATCH', `/v1/adventures/${room}`, {
      settings: { turnPolicy: 'round' },
    });
    expect(policy.status).toBe(200);
    const follower = follow(room);
    await new Promise((resolve) => setTimeout(resolve, 500));

    const mine = await api.request('POST', `/v1/adventures/${room}/actions`, {
      type: 'do',
      text: 'Bar the gate',
    });
    expect(mine.status).toBe(202);
    expect(mine.body).toMatchObject({ roundId: 'round-1', submitted: true });
    const theirs = await api.request(
      'POST',
      `/v1/adventures/${room}/actions`,
      { type: 'do', text: 'Light the beacon' },
      { authorization: `Bearer ${miraKey}` },
    );
    expect(theirs.status).toBe(202);
    const turnId = theirs.body.turnId as string;
    expect(theirs.body).toMatchObject({ roundId: 'round-1' });
    expect(typeof turnId).toBe('string');
    await narrate(room, turnId, ['The gate ', 'holds.']);

    const frames = await follower.until((frame) => frame.event === 'done');
    const events = seen(frames);
    // The next round opens with the close of this one, so its frame comes before the turn's chunks.
    const order = [
      'submitted',
      'submitted',
      'round-closed',
      'turn-started',
      'round-opened',
      'chunk',
      'done',
    ];
    let from = 0;
    for (const name of order) {
      const at = events.indexOf(name, from);
      expect({ name, at: at >= 0 ? 'found' : events }).toEqual({ name, at: 'found' });
      from = at + 1;
    }
    const byName = (name: string) => frames.filter((frame) => frame.event === name);
    expect(byName('submitted').map((frame) => frame.data.userId)).toEqual([api.userId, mira.id]);
    expect(byName('round-closed')[0].data).toMatchObject({
      roundId: 'round-1',
      turnId,
      closedBy: 'all-in',
    });
    expect(byName('turn-started')[0].data).toMatchObject({
      turnId,
      roundId: 'round-1',
      actions: [{ actorId: api.userId }, { actorId: mira.id }],
    });
    expect(byName('done')[0].data).toMatchObject({ turnId, roundId: 'round-1' });
    expect((byName('done')[0].data.actionIds as string[]).length).toBe(2);
    expect(byName('round-opened')[0].data).toMatchObject({ roundId: 'round-2' });
    const beforeTurn = frames.slice(0, events.indexOf('turn-started'));
    expect(JSON.stringify(beforeTurn)).not.toMatch(/beacon|Bar the gate/);
    follower.close();
  });

  it('given a reconnect after its turn stream expired, when the log has the narration, then done is made from the log', async () => {
    const room = await newAdventure();
    const turn = await act(room, 'Wait');
    const follower = follow(room);
    const opened = await follower.until((frame) => frame.event === 'player');
    follower.close();
    await narrate(room, turn.turnId, ['Time passes.']);
    const stream = api.app.get(TurnStreamPublisher);
    const redis = (stream as unknown as { redis: { del(key: string): Promise<number> } }).redis;
    await redis.del(stream.key(turn.turnId));

    const resumed = follow(room, { lastEventId: opened[opened.length - 1].id });
    const [done] = await resumed.until((frame) => frame.event === 'done');
    expect(done.data).toMatchObject({
      turnId: turn.turnId,
      action: { text: 'Time passes.' },
      actionIds: [turn.actionId],
    });
    resumed.close();
  });

  it('given a user who is not in the room, when they open its stream, then 404 and no frame', async () => {
    const room = await newAdventure();
    const accounts = api.app.get(AccountsRepository);
    const stranger = await accounts.createUser({ name: 'stranger' });
    const key = (await accounts.createKey(stranger.id))!.key;
    const reply = await fetch(`${api.baseUrl}/v1/adventures/${room}/stream`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(reply.status).toBe(404);
    expect(await reply.text()).not.toContain('event:');
  });

  it('given a Last-Event-ID this stream never sent, then 400 saying what to send', async () => {
    const room = await newAdventure();
    const reply = await api.request('GET', `/v1/adventures/${room}/stream`, undefined, {
      'last-event-id': 'yesterday',
    });
    expect(reply.status).toBe(400);
    expect(JSON.stringify(reply.body)).toContain('Last-Event-ID');
  });
});
