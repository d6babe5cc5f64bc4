// The client's stream reader against a real HTTP server that breaks the connection mid-turn,
// as a restarting API or a flaky network does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { followStream, SseParser, type SseFrame } from './turn-follower';

describe('SseParser', () => {
  it('reads frames split anywhere, with ids, events, multi-line data and comments', () => {
    const parser = new SseParser();
    const text =
      ': heartbeat\n\nid: 1-0\nevent: chunk\ndata: {"text":"a"}\n\nid: 2-0\r\nevent: chunk\r\ndata: one\r\ndata: two\r\n\r\nevent: done\ndata: {}\n\n';
    const frames: SseFrame[] = [];
    for (const piece of text.match(/[\s\S]{1,3}/g)!) frames.push(...parser.push(piece));
    expect(frames).toEqual([
      { id: '1-0', event: 'chunk', data: '{"text":"a"}' },
      { id: '2-0', event: 'chunk', data: 'one\ntwo' },
      { event: 'done', data: '{}' },
    ]);
  });
});

describe('followStream', () => {
  let server: Server;
  let url: string;
  const seenLastIds: Array<string | undefined> = [];
  const entries = ['The ', 'lamp ', 'turns ', 'slowly.'];

  beforeAll(async () => {
    let connections = 0;
    server = createServer((req, res) => {
      connections++;
      const last = req.headers['last-event-id'] as string | undefined;
      seenLastIds.push(last);
      const from = last ? Number(last.split('-')[0]) + 1 : 0;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The first connection breaks after two entries; the next one finishes the turn.
      const until = connections === 1 ? 2 : entries.length;
      for (let i = from; i < until; i++) {
        res.write(`id: ${i}-0\nevent: chunk\ndata: ${JSON.stringify({ text: entries[i] })}\n\n`);
      }
      if (connections === 1) {
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.end('event: done\ndata: {"action":{"id":"a1"}}\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reconnects with Last-Event-ID after a break and neither loses nor doubles text', async () => {
    let text = '';
    const reconnects: number[] = [];
    const last = await followStream({
      url,
      headers: {},
      signal: new AbortController().signal,
      onReconnect: (attempt) => reconnects.push(attempt),
      onFrame: (frame) => {
        if (frame.event === 'chunk') text += frame.data.text;
      },
    });
    expect(text).toBe('The lamp turns slowly.');
    expect(last?.event).toBe('done');
    expect(reconnects).toEqual([1]);
    expect(seenLastIds).toEqual([undefined, '1-0']);
  });
});

describe('followStream reading turn frames', () => {
  let server: Server;
  let base: string;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      connections++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/stopped') {
        res.write(
          'id: 1-0\nevent: notice\ndata: {"text":"A script failed.","scriptId":"s1","hook":"input"}\n\n',
        );
        res.write('id: 2-0\nevent: message\ndata: {"text":"The tide is out."}\n\n');
        // The connection stays open: `stopped` alone must end the follow.
        res.write('id: 3-0\nevent: stopped\ndata: {"message":"No."}\n\n');
        return;
      }
      res.end('id: 1-0\nevent: bogus\ndata: {}\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => (connections = 0));

  it('decodes notice and message frames and ends at `stopped` without reconnecting', async () => {
    const frames: unknown[] = [];
    const last = await followStream({
      url: `${base}/stopped`,
      headers: {},
      signal: new AbortController().signal,
      onFrame: (frame) => frames.push(frame),
    });
    expect(frames).toEqual([
      {
        id: '1-0',
        event: 'notice',
        data: { text: 'A script failed.', scriptId: 's1', hook: 'input' },
      },
      { id: '2-0', event: 'message', data: { text: 'The tide is out.' } },
      { id: '3-0', event: 'stopped', data: { message: 'No.' } },
    ]);
    expect(last?.event).toBe('stopped');
    expect(connections).toBe(1);
  });

  it('rejects a frame the union does not name, without reconnecting', async () => {
    await expect(
      followStream({
        url: `${base}/unknown`,
        headers: {},
        signal: new AbortController().signal,
        onFrame: () => {},
      }),
    ).rejects.toThrow('unknown turn stream frame "bogus"');
    expect(connections).toBe(1);
  });
});
