// The quick start stays two commands: the first start of a fresh installation prints a key that
// works at once, and only that start; a production start prints none.
import { AppSystem } from '@chronicle/testing';

jest.setTimeout(120_000);

// the JSON log line escapes the quotes around "dev"
const KEY_LINE = /development API key for user .*?: (chr_[a-z0-9]+_[A-Za-z0-9_-]+)/;

let system: AppSystem;

afterEach(async () => {
  await system?.close();
});

it('prints a working key on the first start only', async () => {
  system = await AppSystem.start({ apps: ['api'], env: { DEV_KEY_ON_START: 'auto' } });
  await system.explainFailure(async () => {
    const api = system.process('api');
    await api.waitFor('the development key', () => KEY_LINE.test(api.stdout), 10_000);
    const key = KEY_LINE.exec(api.stdout)![1];
    const list = await fetch(`${system.apiUrl}/v1/adventures`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(list.status).toBe(200);

    const again = await system.restart('api');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(again.stdout).not.toMatch(KEY_LINE);
  });
});

it('prints none when NODE_ENV=production', async () => {
  system = await AppSystem.start({
    apps: ['api'],
    env: { DEV_KEY_ON_START: 'auto', NODE_ENV: 'production' },
  });
  await system.explainFailure(async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(system.process('api').stdout).not.toMatch(/development API key/);
  });
});
