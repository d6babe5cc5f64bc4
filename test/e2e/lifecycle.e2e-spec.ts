// The processes themselves: who is alive (the admin roll call), and a clean
// stop on SIGTERM.
import { AppSystem, isAppBuilt, type AppName } from '@chronicle/testing';
import { ChronicleClient } from './support/chronicle.client';
import { narration, ScriptedNarrator } from './support/scripted-narrator';

jest.setTimeout(180_000);

const ADMIN_KEY = 'test-admin-key-that-is-32-characters';
const WORKERS: AppName[] = isAppBuilt('memory-worker')
  ? ['context-worker', 'memory-worker']
  : ['context-worker'];

let system: AppSystem;
let client: ChronicleClient;
const narrator = new ScriptedNarrator();

beforeAll(async () => {
  system = await AppSystem.start({
    apps: ['api', ...WORKERS, 'context-worker'],
    env: { ADMIN_API_KEY: ADMIN_KEY },
  });
  system.fake.setDefaultReply(narrator.reply);
  // the client sends ADMIN_KEY on /v1/admin and the harness's player key elsewhere
  client = new ChronicleClient(system.apiUrl);
});

afterAll(async () => {
  await system?.close();
});

interface Presence {
  id: string;
  app: string;
  pid: number;
  since: string;
  jobsInFlight: Array<{ jobId: string; turnId?: string; adventureId: string }>;
}

async function rollCall(): Promise<Presence[]> {
  const { body } = await client.expect(200, 'GET', '/v1/admin/workers');
  const list = Array.isArray(body) ? body : (body as { workers?: unknown }).workers;
  if (!Array.isArray(list)) throw new Error(`GET /v1/admin/workers: ${JSON.stringify(body)}`);
  return list as Presence[];
}

describe('GET /v1/admin/workers', () => {
  it('lists every running worker with its id, app and jobs in flight', async () => {
    await system.explainFailure(async () => {
      const workers = await rollCall();
      const expected = system.running().filter((p) => p.app !== 'api');
      expect(expected.length).toBeGreaterThanOrEqual(2);
      expect(workers.map((w) => w.pid).sort()).toEqual(expected.map((p) => p.pid).sort());
      for (const proc of expected) {
        const listed = workers.find((w) => w.pid === proc.pid);
        expect(listed).toEqual(
          expect.objectContaining({
            id: expect.any(String),
            app: proc.app,
            since: expect.any(String),
            jobsInFlight: [],
          }),
        );
      }
      expect(new Set(workers.map((w) => w.id)).size).toBe(workers.length);
    });
  });

  it('shows a turn being narrated as a job in flight', async () => {
    await system.explainFailure(async () => {
      const adventureId = await client.createAdventure({
        title: 'Roll Call',
        opening: 'The bell rings for the roll call.',
        placeholders: {},
        storyCards: [],
      });
      const slow = narration(9000);
      system.fake.enqueue({
        text: slow.text,
        chunks: 20,
        delayMs: 150,
        path: '/v1/chat/completions',
      });
      const accepted = await client.act(adventureId, 'do', 'answer the roll call');
      expect(accepted.status).toBe(202);
      const turnId = accepted.body.turnId;
      let busy: Presence | undefined;
      for (let i = 0; i < 40 && !busy; i++) {
        busy = (await rollCall()).find((w) => w.jobsInFlight.some((j) => j.turnId === turnId));
        if (!busy) await new Promise((r) => setTimeout(r, 100));
      }
      expect(busy?.app).toBe('context-worker');
      expect(busy?.jobsInFlight).toEqual([
        expect.objectContaining({ adventureId, turnId, jobId: expect.any(String) }),
      ]);
      expect((await client.follow(accepted.body)).outcome).toBe('done');
    });
  });
});

describe('graceful shutdown', () => {
  it('exits 0 within 30 s of SIGTERM, for every app', async () => {
    await system.explainFailure(async () => {
      for (const proc of system.running()) {
        const status = await proc.stop(30_000);
        expect([proc.app, status]).toEqual([proc.app, { code: 0, signal: null }]);
        expect([proc.app, proc.stderr]).not.toEqual([proc.app, expect.stringMatching(/^\s+at /m)]);
      }
    });
  });
});
