import { createServer, type Server } from 'node:net';
import { portInUse } from './port-in-use';

describe('portInUse', () => {
  let taken: Server;
  afterEach(
    () => new Promise<void>((resolve) => (taken ? taken.close(() => resolve()) : resolve())),
  );

  it('given a port another server holds, when a second listens on it, then it names the port and the variable to set', async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as { port: number }).port;
    const second = createServer();
    const error = await new Promise<unknown>((resolve) => {
      second.once('error', resolve);
      second.listen(port, '127.0.0.1');
    });
    expect(portInUse(error, 'METRICS_PORT', port, '127.0.0.1')?.message).toBe(
      `METRICS_PORT ${port} on 127.0.0.1 is in use (another Chronicle or another worker on this host?): set METRICS_PORT to a free port, or 0 for any free port`,
    );
  });

  it('leaves any other error alone', () => {
    expect(portInUse(new Error('boom'), 'PORT', 3000, '0.0.0.0')).toBeNull();
  });
});
