// Start-up with Postgres or Redis unreachable: the most common first-run
// problem gets one line naming the service, where it was looked for and how to
// start it, and a non-zero exit — never a stack trace.
import { AppSystem, freePort, isAppBuilt, type AppName } from '@chronicle/testing';

jest.setTimeout(120_000);

const APPS: AppName[] = (['api', 'context-worker', 'memory-worker'] as AppName[]).filter(
  isAppBuilt,
);

let system: AppSystem;

beforeAll(async () => {
  // the database and fake model exist; each test starts one app with one service pointed away
  system = await AppSystem.create();
});

afterAll(async () => {
  await system?.close();
});

describe('start-up with a service unreachable', () => {
  it.each(APPS)('%s names Postgres, says how to start it, and exits non-zero', async (app) => {
    const closed = await freePort();
    const proc = await system.spawn(app, {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/chronicle`,
    });
    const status = await proc.waitForExit(30_000);
    const said = `${proc.stderr}\n${proc.stdout}`;
    expect(status.code).not.toBe(0);
    expect(status.code).not.toBeNull();
    expect(proc.stderr).toMatch(/Postgres/);
    expect(proc.stderr).toContain(`127.0.0.1:${closed}`);
    expect(proc.stderr).toMatch(/start/i);
    expect(proc.stderr).toContain('DATABASE_URL');
    expect(said).not.toMatch(/^\s+at /m);
  });

  it.each(APPS)('%s names Redis, says how to start it, and exits non-zero', async (app) => {
    const closed = await freePort();
    const proc = await system.spawn(app, { REDIS_URL: `redis://127.0.0.1:${closed}` });
    const status = await proc.waitForExit(30_000);
    const said = `${proc.stderr}\n${proc.stdout}`;
    expect(status.code).not.toBe(0);
    expect(status.code).not.toBeNull();
    expect(proc.stderr).toMatch(/Redis/);
    expect(proc.stderr).toContain(`127.0.0.1:${closed}`);
    expect(proc.stderr).toMatch(/start/i);
    expect(proc.stderr).toContain('REDIS_URL');
    expect(said).not.toMatch(/^\s+at /m);
  });
});
