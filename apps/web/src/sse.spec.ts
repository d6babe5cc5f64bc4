// The client's stream reader against a real HTTP server that breaks the connection mid-turn,
// as a restarting API or a flaky network does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { followStream, SseParser, type SseFrame } from './sse';

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
        if (frame.event === 'chunk') text += (JSON.parse(frame.data) as { text: string }).text;
      },
    });
    expect(text).toBe('The lamp turns slowly.');
    expect(last?.event).toBe('done');
    expect(reconnects).toEqual([1]);
    expect(seenLastIds).toEqual([undefined, '1-0']);
  });
});
