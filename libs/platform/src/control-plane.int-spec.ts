import { randomUUID } from 'node:crypto';
import { Module, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { PrivateRedis, TEST_REDIS_URL } from '@chronicle/testing';
import {
  ControlPlane,
  ControlPlaneModule,
  controlPlaneTransport,
  SIGNAL_SEND_TIMEOUT_MS,
} from './control-plane';

// The control plane between real processes' worth of Nest microservices on a real Redis: a
// revoked key announced by one reaches the others (and only within its installation), and a
// sender is answered within its bound when Redis does not take the signal.

async function startProcess(redisUrl: string, installation: string): Promise<INestMicroservice> {
  @Module({ imports: [ControlPlaneModule.forRoot({ redisUrl, installation, app: 'api' })] })
  class ProcessModule {}
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(ProcessModule, {
    ...controlPlaneTransport(redisUrl),
    logger: false,
  });
  await app.listen();
  return app;
}

async function until(what: string, check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('ControlPlane', () => {
  it('given three processes of two installations, when one announces a revoked key and a changed user, then both of its installation hear them and the other does not', async () => {
    const installation = `test-${randomUUID().slice(0, 8)}`;
    const apps = await Promise.all([
      startProcess(TEST_REDIS_URL, installation),
      startProcess(TEST_REDIS_URL, installation),
      startProcess(TEST_REDIS_URL, `${installation}-other`),
    ]);
    try {
      const heard = apps.map(() => [] as string[]);
      apps.forEach((app, i) => {
        app.get(ControlPlane).whenKeyRevoked((prefix) => heard[i]!.push(`key ${prefix}`));
        app.get(ControlPlane).whenUserChanged((userId) => heard[i]!.push(`user ${userId}`));
      });
      await apps[0]!.get(ControlPlane).announceKeyRevoked('abcdefghijkl');
      await apps[0]!.get(ControlPlane).announceUserChanged('user-1');
      await until('both processes of the installation heard both', () =>
        heard.slice(0, 2).every((h) => h.length === 2),
      );
      // the other installation's process had the same time, and more, to hear them
      await new Promise((resolve) => setTimeout(resolve, 200));
      const both = ['key abcdefghijkl', 'user user-1'];
      expect(heard).toEqual([both, both, []]);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });

  it('given a Redis that stopped answering, when a signal is sent, then the sender is answered with an error within its bound', async () => {
    const redis = await PrivateRedis.start();
    const app = await startProcess(redis.url, `test-${randomUUID().slice(0, 8)}`);
    const controlPlane = app.get(ControlPlane);
    try {
      await controlPlane.announceKeyRevoked('abcdefghijkl'); // connected, and taken
      redis.freeze();
      const started = Date.now();
      await expect(controlPlane.announceKeyRevoked('mnopqrstuvwx')).rejects.toThrow(
        /did not take chronicle\.keys\.revoked within/,
      );
      expect(Date.now() - started).toBeLessThan(SIGNAL_SEND_TIMEOUT_MS + 1_000);
    } finally {
      redis.thaw();
      await app.close();
      await redis.destroy();
    }
  });
});
