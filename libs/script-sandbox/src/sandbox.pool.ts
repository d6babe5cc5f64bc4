// ScriptSandboxPool: the one way Chronicle runs a script. A few child processes (the API and
// the context worker each fork their own), each running one hook at a time in isolated-vm; runs
// queue for a free child. A watchdog SIGKILLs a child that does not answer within the run's
// time limit plus a grace (a hung or SIGSTOPped child, an isolate whose limit did not hold) and
// a fresh one takes its place; children retire themselves after enough runs or RSS.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type {
  HookRunner,
  HookRunRequest,
  HookRunResponse,
  SourceField,
} from '@chronicle/scripting';
import type { ChildMessage, CompileProblem, ParentMessage } from './sandbox.protocol';

/** A message to a child before the pool numbers it. */
type ParentMessageBody = ParentMessage extends infer M
  ? M extends ParentMessage
    ? Omit<M, 'id'>
    : never
  : never;

/** isolated-vm on Node 20+ needs the startup snapshot off (its README). */
export const SANDBOX_NODE_FLAGS: readonly string[] = ['--no-node-snapshot'];

export interface SandboxPoolOptions {
  /** Child processes; each runs one hook at a time. */
  processes: number;
  /** A child past this is killed and replaced: a run's own limit plus this grace. */
  killGraceMs?: number;
  /** Runs after which a child retires. */
  maxRunsPerChild?: number;
  /** RSS after which a child retires. */
  maxRssMb?: number;
  /** Isolates one child keeps warm. */
  maxIsolatesPerChild?: number;
  /** The child's entry; defaults to the built sandbox.child.js. */
  entry?: string;
}

/** No child could be started or reached: an infrastructure fault, worth a retry. */
export class SandboxUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailableError';
  }
}

interface Job {
  id: number;
  message: ParentMessage;
  /** How long the child may take before it is killed. */
  limitMs: number;
  resolve: (message: ChildMessage) => void;
  reject: (error: Error) => void;
}

interface Child {
  process: ChildProcess;
  ready: boolean;
  retiring: boolean;
  job: Job | null;
  watchdog: NodeJS.Timeout | null;
  /** Set when the watchdog killed it, so the job is answered as a timeout, not a crash. */
  killedByWatchdog: boolean;
  /** Code this child has compiled, by sourceKey: its sources need not be sent again. */
  compiled: Set<string>;
}

/** One hook's code at one version for one owner. */
function sourceKey(request: HookRunRequest): string {
  return `${request.owner}\u0000${request.scriptId}\u0000${request.version}\u0000${request.hook}`;
}

/** The built child: next to this file in dist, or dist's copy when running from sources. */
function defaultEntry(): string {
  const beside = join(__dirname, 'sandbox.child.js');
  if (existsSync(beside)) return beside;
  return join(
    __dirname,
    '..',
    '..',
    '..',
    'dist',
    'libs',
    'script-sandbox',
    'src',
    'sandbox.child.js',
  );
}

export class ScriptSandboxPool implements HookRunner {
  private readonly children = new Set<Child>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private recentFailures: number[] = [];
  private readonly entry: string;
  private readonly killGraceMs: number;
  /** Children started so far (a test and the benchmark read it). */
  spawned = 0;

  constructor(private readonly options: SandboxPoolOptions) {
    this.entry = options.entry ?? defaultEntry();
    this.killGraceMs = options.killGraceMs ?? 500;
    if (!existsSync(this.entry)) {
      throw new SandboxUnavailableError(
        `the sandbox child ${this.entry} is missing (run npm run build)`,
      );
    }
  }

  /**
   * Children start on the first run, not with the process: an API or worker whose adventures
   * run no scripts forks nothing.
   */
  private started = false;
  private ensureStarted(): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < Math.max(1, this.options.processes); i++) this.spawn();
  }

  /** Pids of the live children (tests kill them). */
  pids(): number[] {
    return [...this.children].map((c) => c.process.pid).filter((p): p is number => !!p);
  }

  /** The pid of the child running a job now, if any. */
  busyPids(): number[] {
    return [...this.children]
      .filter((c) => c.job !== null)
      .map((c) => c.process.pid)
      .filter((p): p is number => !!p);
  }

  async run(request: HookRunRequest): Promise<HookRunResponse> {
    const started = performance.now();
    try {
      const answer = await this.submit({ kind: 'run', request }, request.timeoutMs);
      if (answer.kind !== 'ran') throw new Error('unexpected answer');
      return answer.response;
    } catch (error) {
      if (error instanceof SandboxUnavailableError) throw error;
      const timedOut = error instanceof ChildKilledError && error.byWatchdog;
      return {
        outcome: timedOut ? 'timeout' : 'crashed',
        error: timedOut
          ? `timed out after ${request.timeoutMs} ms (the sandbox process stopped answering)`
          : 'the sandbox process stopped while the script ran',
        ms: performance.now() - started,
        cpuMs: 0,
      };
    }
  }

  /** Compile errors per source (syntax), from a child: no engine runs in this process. */
  async compile(sources: Partial<Record<SourceField, string>>): Promise<CompileProblem[]> {
    const answer = await this.submit({ kind: 'compile', sources }, 10_000);
    if (answer.kind !== 'compiled') throw new SandboxUnavailableError('unexpected answer');
    return answer.problems;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      job.reject(new SandboxUnavailableError('the sandbox is shutting down'));
    }
    await Promise.all(
      [...this.children].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.process.exitCode !== null || child.process.signalCode !== null) {
              resolve();
              return;
            }
            child.process.once('exit', () => resolve());
            child.process.kill('SIGKILL');
          }),
      ),
    );
  }

  private submit(message: ParentMessageBody, limitMs: number): Promise<ChildMessage> {
    if (this.closed) return Promise.reject(new SandboxUnavailableError('the sandbox is closed'));
    this.ensureStarted();
    if (this.children.size === 0) {
      return Promise.reject(new SandboxUnavailableError('no sandbox process could be started'));
    }
    return new Promise<ChildMessage>((resolve, reject) => {
      const id = this.nextId++;
      this.queue.push({
        id,
        message: { ...message, id } as ParentMessage,
        limitMs,
        resolve,
        reject,
      });
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (const child of this.children) {
      if (this.queue.length === 0) return;
      if (!child.ready || child.retiring || child.job) continue;
      const job = this.queue.shift()!;
      child.job = job;
      child.watchdog = setTimeout(() => {
        child.killedByWatchdog = true;
        child.process.kill('SIGKILL');
      }, job.limitMs + this.killGraceMs);
      this.send(child, job.message, true);
    }
  }

  private send(child: Child, message: ParentMessage, mayOmitSources: boolean): void {
    let wire: ParentMessage = message;
    if (message.kind === 'run') {
      const known = mayOmitSources && child.compiled.has(sourceKey(message.request));
      // The compiled set also marks a hook as compiled once it was sent in full, so the
      // second run of a script sends only its inputs.
      if (!known) child.compiled.add(sourceKey(message.request));
      wire = known
        ? {
            ...message,
            request: {
              ...message.request,
              library: message.request.library === '' ? '' : ' ',
              source: '',
            },
            sourcesOmitted: true,
          }
        : { ...message, sourcesOmitted: false };
    }
    child.process.send(JSON.stringify(wire), (error) => {
      if (error) this.failChild(child, error);
    });
  }

  private spawn(): void {
    if (this.closed) return;
    this.spawned++;
    const env: Record<string, string> = {
      // An allow-list: the child holds no database, Redis or model credentials.
      TZ: 'UTC',
      SANDBOX_MAX_RUNS: String(this.options.maxRunsPerChild ?? 5000),
      SANDBOX_MAX_RSS_MB: String(this.options.maxRssMb ?? 512),
      SANDBOX_MAX_ISOLATES: String(this.options.maxIsolatesPerChild ?? 32),
    };
    const processHandle = fork(this.entry, [], {
      execArgv: [...SANDBOX_NODE_FLAGS],
      env,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'json',
    });
    const child: Child = {
      process: processHandle,
      ready: false,
      retiring: false,
      job: null,
      watchdog: null,
      killedByWatchdog: false,
      compiled: new Set(),
    };
    this.children.add(child);
    processHandle.on('message', (raw: unknown) => this.onMessage(child, raw));
    processHandle.on('error', (error) => this.failChild(child, error));
    processHandle.on('exit', () => this.onExit(child));
  }

  private onMessage(child: Child, raw: unknown): void {
    if (typeof raw !== 'string') return;
    const message = JSON.parse(raw) as ChildMessage;
    if (message.kind === 'ready') {
      child.ready = true;
      this.recentFailures = [];
      this.dispatch();
      return;
    }
    const job = child.job;
    if (!job || job.id !== message.id) return;
    if (message.kind === 'need-sources') {
      // The child evicted the isolate (LRU, a timeout): send the run again in full.
      this.send(child, job.message, false);
      return;
    }
    this.clearJob(child);
    if (message.retiring) {
      // It exits on its own; a replacement starts now so the pool keeps its size.
      child.retiring = true;
      this.spawn();
    }
    job.resolve(message);
    this.dispatch();
  }

  private clearJob(child: Child): void {
    if (child.watchdog) clearTimeout(child.watchdog);
    child.watchdog = null;
    child.job = null;
  }

  private failChild(child: Child, error: Error): void {
    if (child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill('SIGKILL');
    }
    void error;
  }

  private onExit(child: Child): void {
    const job = child.job;
    this.clearJob(child);
    this.children.delete(child);
    if (job) job.reject(new ChildKilledError(child.killedByWatchdog));
    if (this.closed) return;
    if (!child.retiring) {
      const now = Date.now();
      this.recentFailures = [...this.recentFailures.filter((t) => now - t < 10_000), now];
      if (!child.ready && this.recentFailures.length >= 5) {
        // Children die before they are ready: starting more would spin.
        if (this.children.size === 0) {
          for (const queued of this.queue.splice(0)) {
            queued.reject(new SandboxUnavailableError('the sandbox processes fail to start'));
          }
        }
        return;
      }
      this.spawn();
    }
    this.dispatch();
  }
}

class ChildKilledError extends Error {
  constructor(readonly byWatchdog: boolean) {
    super(byWatchdog ? 'killed by the watchdog' : 'the child exited');
  }
}
