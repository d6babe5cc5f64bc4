import { StartBanner } from './start-banner';

const json = (entry: Record<string, unknown>) => JSON.stringify(entry);

describe('StartBanner', () => {
  it('prints the URL, the docs and a sign-in link with the key in the fragment once all are ready', async () => {
    let out = '';
    const banner = new StartBanner({ host: '0.0.0.0', port: 3000 }, 2, (t) => (out += t));
    banner.line(json({ level: 'info', app: 'api', msg: 'mapped {/v1/adventures, GET} route' }));
    banner.line(
      json({
        level: 'info',
        app: 'api',
        msg: 'development API key for user "dev" (shown once; send it as "Authorization: Bearer <key>"): chr_ab12_sEcReT-x',
      }),
    );
    banner.line(json({ level: 'info', app: 'api', msg: 'api ready' }));
    expect(out).toBe('');
    banner.line(json({ level: 'info', app: 'context-worker', msg: 'context-worker ready' }));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(out).toContain('Chronicle is running: http://localhost:3000/');
    expect(out).toContain('http://localhost:3000/docs');
    expect(out).toContain('http://localhost:3000/#key=chr_ab12_sEcReT-x');
    expect(out).not.toContain('?key=');
    expect(out).not.toContain('mapped');
  });

  it('passes warnings, errors and lines that are not JSON through, one line each', () => {
    let out = '';
    const banner = new StartBanner({ host: '127.0.0.1', port: 4000 }, 3, (t) => (out += t));
    banner.line(json({ level: 'warn', app: 'memory-worker', msg: 'Redis is slow' }));
    banner.line('plain text');
    banner.line(json({ level: 'info', app: 'api', msg: 'quiet' }));
    expect(out).toBe('memory-worker warn: Redis is slow\nplain text\n');
  });

  it('prints why a process failed, not only that it did', () => {
    let out = '';
    const banner = new StartBanner({ host: '127.0.0.1', port: 4000 }, 3, (t) => (out += t));
    banner.line(
      json({
        level: 'error',
        app: 'memory-worker',
        msg: 'start-up failed',
        error: 'Error: METRICS_PORT 9465 on 0.0.0.0 is in use',
      }),
    );
    expect(out).toBe(
      'memory-worker error: start-up failed: Error: METRICS_PORT 9465 on 0.0.0.0 is in use\n',
    );
  });
});
