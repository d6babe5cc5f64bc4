// A Redis Cluster of one test file's own: three masters (`redis-server --cluster-enabled yes`) on
// free loopback ports in a temp dir, joined with `redis-cli --cluster create … --cluster-replicas
// 0`, ready once every node says cluster_state:ok. Always `noeviction` and AOF, as production
// must run. Its `url` is the redis-cluster:// form REDIS_URL takes.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './app-processes';
import { withConnection } from './private-redis';

const run = promisify(execFile);
const START_TIMEOUT_MS = 30_000;

interface ClusterNode {
  port: number;
  child: ChildProcess;
  output: string;
}

export class PrivateRedisCluster {
  private constructor(
    readonly dir: string,
    private readonly nodes: ClusterNode[],
  ) {}

  static async start(masters = 3): Promise<PrivateRedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'chronicle-redis-cluster-'));
    const nodes: ClusterNode[] = [];
    const cluster = new PrivateRedisCluster(dir, nodes);
    live.add(cluster);
    try {
      for (let i = 0; i < masters; i++) nodes.push(startNode(dir, await freePort()));
      for (const node of nodes) await waitFor(() => ping(node.port), `node ${node.port} answers`);
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...nodes.map((n) => `127.0.0.1:${n.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { timeout: START_TIMEOUT_MS },
      );
      for (const node of nodes) {
        await waitFor(
          async () => /cluster_state:ok/.test(await command(node.port, 'CLUSTER', 'INFO')),
          `node ${node.port} says cluster_state:ok`,
        );
      }
      // every node must also know every other's slots before a client's first refresh
      for (const node of nodes) {
        await waitFor(
          async () =>
            (await command(node.port, 'CLUSTER', 'NODES')).split('\n').filter((l) => l.trim())
              .length === masters,
          `node ${node.port} knows all ${masters} masters`,
        );
      }
    } catch (error) {
      const output = cluster.logTail();
      await cluster.destroy();
      throw new Error(`the private Redis Cluster did not start: ${String(error)}\n${output}`);
    }
    return cluster;
  }

  /** REDIS_URL for the apps: every master as a seed. */
  get url(): string {
    return `redis-cluster://${this.ports.map((port) => `127.0.0.1:${port}`).join(',')}`;
  }

  get ports(): number[] {
    return this.nodes.map((node) => node.port);
  }

  /** One command on one node (CLUSTER KEYSLOT, CONFIG SET …), as its raw reply. */
  command(port: number, name: string, ...args: string[]): Promise<string> {
    return command(port, name, ...args);
  }

  /** Kills one master (SIGKILL): with no replica, its slots go unserved. */
  async killNode(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node || node.child.exitCode !== null || node.child.signalCode) return;
    const exited = new Promise<void>((resolve) => node.child.once('exit', () => resolve()));
    node.child.kill('SIGKILL');
    await exited;
  }

  /** What the nodes printed, for a failure message. */
  logTail(): string {
    return this.nodes
      .map(
        (n) =>
          `----- redis cluster node ${n.port} -----\n${n.output.split('\n').slice(-20).join('\n')}`,
      )
      .join('\n');
  }

  /** Kills every node and deletes the directory. */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.killNode(node.port)));
    live.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function startNode(dir: string, port: number): ClusterNode {
  const nodeDir = join(dir, String(port));
  mkdirSync(nodeDir);
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      nodeDir,
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      '5000',
      '--save',
      '',
      '--appendonly',
      'yes',
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      '',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const node: ClusterNode = { port, child, output: '' };
  const keep = (chunk: Buffer) => {
    node.output = (node.output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return node;
}

function command(port: number, name: string, ...args: string[]): Promise<string> {
  return withConnection(`redis://127.0.0.1:${port}`, async (redis) =>
    String(await redis.call(name, ...args)),
  );
}

async function ping(port: number): Promise<boolean> {
  return (await command(port, 'PING').catch(() => '')) === 'PONG';
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting until ${what}`);
}

// A jest worker that is torn down never reaches afterAll: its nodes go down with it.
const live = new Set<PrivateRedisCluster>();
process.once('exit', () => {
  for (const cluster of live) {
    for (const node of cluster['nodes']) {
      if (node.child.exitCode === null && node.child.pid) process.kill(node.child.pid, 'SIGKILL');
    }
  }
});
