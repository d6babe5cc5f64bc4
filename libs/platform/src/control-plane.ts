// Kept whole past 400 lines (eslint's max-lines, which skips comments, counts fewer): the sender
// (ControlPlane), the answering controller and the module that wires them share the patterns and
// payload types, and a signal is easiest to follow from send to answer in one file.
import { randomUUID } from 'node:crypto';
import {
  Controller,
  DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  ClientProxy,
  ClientRedis,
  EventPattern,
  Payload,
  ServerRedis,
  Transport,
  type MicroserviceOptions,
} from '@nestjs/microservices';
import type Redis from 'ioredis';
import { closeRedis, openRedis } from './redis-connection.factory';
import { isClusterUrl } from './redis-target';
import { firstValueFrom } from 'rxjs';

// The control plane: signals that fan out to every process and need no queue
// (cancel a turn in flight; ask the workers who is alive and busy; tell every
// process a key was revoked or a user changed, so none trusts its cached copy). It rides
// on @nestjs/microservices' Redis transport, i.e. Redis pub/sub: a message
// reaches whoever is subscribed now and is never stored, which is right for a
// signal and wrong for work (work goes through BullMQ).
//
// Pub/sub channels are global to a Redis server, so every payload names its
// installation (the queue prefix) and a process ignores other installations'
// signals: two deployments, or two test files, can share one Redis.
//
// On a Redis Cluster the same holds: a PUBLISH on any node reaches the subscribers of every node
// (classic pub/sub is cluster-wide; channels are not keys and have no slot), so the transport
// only needs its connections to be ioredis Cluster clients (createControlConnection).

export const CONTROL_PATTERNS = {
  cancelTurn: 'chronicle.turn.cancel',
  rollCall: 'chronicle.workers.roll-call',
  present: 'chronicle.workers.present',
  keyRevoked: 'chronicle.keys.revoked',
  userChanged: 'chronicle.users.changed',
  adventureAppended: 'chronicle.adventures.appended',
} as const;

export type AppName = 'api' | 'context-worker' | 'memory-worker';

export interface JobInFlight {
  jobId: string;
  queue: string;
  adventureId: string;
  turnId?: string;
  since: string;
}

export interface WorkerPresence {
  id: string;
  app: AppName;
  pid: number;
  since: string;
  jobsInFlight: JobInFlight[];
}

interface Envelope {
  installation: string;
}
interface CancelTurnSignal extends Envelope {
  adventureId: string;
  turnId: string;
}
interface RollCallSignal extends Envelope {
  requestId: string;
}
interface PresentSignal extends Envelope {
  requestId: string;
  worker: WorkerPresence;
}
interface KeyRevokedSignal extends Envelope {
  prefix: string;
}
interface UserChangedSignal extends Envelope {
  userId: string;
}
interface AdventureAppendedSignal extends Envelope {
  adventureId: string;
  version: number;
}

export interface ControlPlaneOptions {
  redisUrl: string;
  installation: string;
  app: AppName;
}

const CONTROL_OPTIONS = Symbol('CONTROL_OPTIONS');
const CONTROL_CLIENT = Symbol('CONTROL_CLIENT');

/** Delay between reconnects of the control plane after Redis went away. */
const RECONNECT_DELAY_MS = 1_000;

/** How long a sender waits for a signal to be published (see ControlPlane.emit). */
export const SIGNAL_SEND_TIMEOUT_MS = 2_000;

function redisTransport(redisUrl: string) {
  const retry = {
    // Without these Nest's Redis transport gives up for good after one
    // disconnect, and a Redis restart would leave cancel and roll call dead.
    retryAttempts: Number.MAX_SAFE_INTEGER,
    retryDelay: RECONNECT_DELAY_MS,
  };
  // A cluster's connections are made by createControlConnection from the URL itself.
  if (isClusterUrl(redisUrl)) return { transport: Transport.REDIS as const, options: retry };
  const url = new URL(redisUrl);
  return {
    transport: Transport.REDIS as const,
    options: {
      ...retry,
      host: url.hostname,
      port: Number(url.port || 6379),
      password: url.password ? decodeURIComponent(url.password) : undefined,
      username: url.username ? decodeURIComponent(url.username) : undefined,
      db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined,
      tls: url.protocol === 'rediss:' ? {} : undefined,
    },
  };
}

/**
 * The control plane's listener, hardened for Redis going away: closing it
 * while Redis is down disconnects instead of waiting on (or throwing from) a
 * QUIT that cannot be sent, so the process still shuts down cleanly. Closing
 * twice is a no-op: Nest's NestMicroservice.close() closes the transport again
 * even when the app is already terminated, and disconnecting an ended ioredis
 * client arms a 2 s timer that holds the process open.
 */
class ControlPlaneServer extends ServerRedis {
  constructor(private readonly redisUrl: string) {
    super(redisTransport(redisUrl).options);
  }

  override createRedisClient(): Redis {
    return (
      createControlConnection(this.redisUrl, (times) => this.createRetryStrategy(times)) ??
      super.createRedisClient()
    );
  }

  override async close(): Promise<void> {
    this.isManuallyClosed = true;
    for (const client of [this.pubClient, this.subClient]) {
      if (client) await closeRedis(client);
    }
  }
}

/** The control plane's sender: Nest's Redis client, on a cluster client when REDIS_URL is one. */
class ControlPlaneClient extends ClientRedis {
  constructor(private readonly redisUrl: string) {
    super(redisTransport(redisUrl).options);
  }

  override createClient(): Redis {
    return (
      createControlConnection(this.redisUrl, (times) => this.createRetryStrategy(times)) ??
      super.createClient()
    );
  }
}

/**
 * A pub or sub connection to a Redis Cluster, retried as Nest's transport decides; undefined
 * for a single server, which Nest's own client handles. (Nest types its clients as `Redis`;
 * a `Cluster` takes the same pub/sub commands and events.)
 */
function createControlConnection(
  redisUrl: string,
  retry: (times: number) => number | void | undefined,
): Redis | undefined {
  if (!isClusterUrl(redisUrl)) return undefined;
  return openRedis(redisUrl, {
    lazyConnect: true,
    retryStrategy: (times) => retry(times) ?? null,
  }) as unknown as Redis;
}

/** Options for `app.connectMicroservice` / `NestFactory.createMicroservice`. */
export function controlPlaneTransport(redisUrl: string): MicroserviceOptions {
  return { strategy: new ControlPlaneServer(redisUrl) };
}

@Injectable()
export class ControlPlane implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly workerId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly startedAt = new Date().toISOString();
  private readonly jobs = new Map<string, JobInFlight>();
  private readonly aborts = new Map<string, AbortController>();
  private readonly rollCalls = new Map<string, WorkerPresence[]>();
  private readonly keyRevokedListeners: Array<(prefix: string) => void> = [];
  private readonly userChangedListeners: Array<(userId: string) => void> = [];
  private readonly appendedListeners: Array<(adventureId: string, version: number) => void> = [];

  constructor(
    @Inject(CONTROL_OPTIONS) private readonly options: ControlPlaneOptions,
    @Inject(CONTROL_CLIENT) private readonly client: ClientProxy,
  ) {}

  /**
   * Opens the sending side now rather than on the first signal: Nest's client connects lazily,
   * and a worker's first answer to a roll call would otherwise spend the call's whole wait
   * connecting (a Redis Cluster's client first learns the slots). Not awaited: a Redis that is
   * down at start-up is the start-up checks' and /health's to report.
   */
  onApplicationBootstrap(): void {
    this.client.connect().catch(() => undefined);
  }

  // ---- cancel a turn in flight ----

  /** Broadcasts a cancel; whichever worker runs the turn aborts its model stream. */
  async cancelTurn(adventureId: string, turnId: string): Promise<void> {
    await this.emit(CONTROL_PATTERNS.cancelTurn, { adventureId, turnId });
  }

  /** A worker registers the turn it runs; the returned signal fires on cancel. */
  registerTurn(turnId: string): { signal: AbortSignal; release: () => void } {
    const controller = new AbortController();
    this.aborts.set(turnId, controller);
    return {
      signal: controller.signal,
      release: () => {
        if (this.aborts.get(turnId) === controller) this.aborts.delete(turnId);
      },
    };
  }

  onCancelTurn(signal: CancelTurnSignal): void {
    if (signal.installation !== this.options.installation) return;
    this.aborts.get(signal.turnId)?.abort(new TurnCancelledSignal(signal.turnId));
  }

  // ---- who is alive and busy ----

  trackJob(job: JobInFlight): () => void {
    this.jobs.set(job.jobId, job);
    return () => this.jobs.delete(job.jobId);
  }

  presence(): WorkerPresence {
    return {
      id: this.workerId,
      app: this.options.app,
      pid: process.pid,
      since: this.startedAt,
      jobsInFlight: [...this.jobs.values()],
    };
  }

  /** Asks every worker to answer, and collects the answers that arrive within `waitMs`. */
  async rollCall(waitMs = 500): Promise<WorkerPresence[]> {
    const requestId = randomUUID();
    this.rollCalls.set(requestId, []);
    try {
      await this.emit(CONTROL_PATTERNS.rollCall, { requestId });
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      return (this.rollCalls.get(requestId) ?? []).sort((a, b) =>
        a.app === b.app ? a.id.localeCompare(b.id) : a.app.localeCompare(b.app),
      );
    } finally {
      this.rollCalls.delete(requestId);
    }
  }

  async onRollCall(signal: RollCallSignal): Promise<void> {
    if (signal.installation !== this.options.installation) return;
    if (this.options.app === 'api') return;
    await this.emit(CONTROL_PATTERNS.present, {
      requestId: signal.requestId,
      worker: this.presence(),
    });
  }

  onPresent(signal: PresentSignal): void {
    if (signal.installation !== this.options.installation) return;
    this.rollCalls.get(signal.requestId)?.push(signal.worker);
  }

  // ---- a key revoked or a user changed on one API instance ----

  /** Tells every process that the key with this prefix was revoked. */
  async announceKeyRevoked(prefix: string): Promise<void> {
    await this.emit(CONTROL_PATTERNS.keyRevoked, { prefix });
  }

  /** Calls `listener` with each revoked key's prefix announced by any process, this one's too. */
  whenKeyRevoked(listener: (prefix: string) => void): void {
    this.keyRevokedListeners.push(listener);
  }

  onKeyRevoked(signal: KeyRevokedSignal): void {
    if (signal.installation !== this.options.installation) return;
    if (typeof signal.prefix !== 'string') return;
    for (const listener of this.keyRevokedListeners) listener(signal.prefix);
  }

  /** Tells every process that this user's account row changed (a budget, a name). */
  async announceUserChanged(userId: string): Promise<void> {
    await this.emit(CONTROL_PATTERNS.userChanged, { userId });
  }

  /** Calls `listener` with each changed user's id announced by any process, this one's too. */
  whenUserChanged(listener: (userId: string) => void): void {
    this.userChangedListeners.push(listener);
  }

  onUserChanged(signal: UserChangedSignal): void {
    if (signal.installation !== this.options.installation) return;
    if (typeof signal.userId !== 'string') return;
    for (const listener of this.userChangedListeners) listener(signal.userId);
  }

  // ---- an adventure's stream grew (the room streams' wake-up; the log holds what) ----

  /**
   * Tells every process that `adventureId`'s log reached `version`: its room-stream followers read
   * the log after their point. A signal, not the data: one lost is made up by the followers'
   * quiet check of the log.
   */
  async announceAppended(adventureId: string, version: number): Promise<void> {
    await this.emit(CONTROL_PATTERNS.adventureAppended, { adventureId, version });
  }

  /** Calls `listener` with each append announced by any process, this one's too. */
  whenAppended(listener: (adventureId: string, version: number) => void): void {
    this.appendedListeners.push(listener);
  }

  onAppended(signal: AdventureAppendedSignal): void {
    if (signal.installation !== this.options.installation) return;
    if (typeof signal.adventureId !== 'string' || typeof signal.version !== 'number') return;
    for (const listener of this.appendedListeners) listener(signal.adventureId, signal.version);
  }

  /**
   * Publishes a signal, waiting at most SIGNAL_SEND_TIMEOUT_MS: with Redis away the client holds
   * the PUBLISH until it reconnects, and a caller (an admin's revoke, a player's cancel) must
   * get its answer now. The held PUBLISH still goes out on reconnect, late but harmless.
   */
  private async emit(pattern: string, payload: object): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `the control plane did not take ${pattern} within ${SIGNAL_SEND_TIMEOUT_MS} ms`,
            ),
          ),
        SIGNAL_SEND_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([
        firstValueFrom(
          this.client.emit(pattern, { installation: this.options.installation, ...payload }),
          { defaultValue: undefined },
        ),
        timedOut,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    for (const controller of this.aborts.values()) controller.abort(new Error('shutting down'));
    // Closing throws "Connection is closed" when Redis is already gone; the
    // rest of the shutdown must still run.
    await this.client.close().catch(() => undefined);
  }
}

export class TurnCancelledSignal extends Error {
  constructor(readonly turnId: string) {
    super(`turn ${turnId} was cancelled`);
    this.name = 'TurnCancelledSignal';
  }
}

@Controller()
export class ControlPlaneController {
  constructor(private readonly controlPlane: ControlPlane) {}

  @EventPattern(CONTROL_PATTERNS.cancelTurn)
  cancelTurn(@Payload() signal: CancelTurnSignal): void {
    this.controlPlane.onCancelTurn(signal);
  }

  @EventPattern(CONTROL_PATTERNS.rollCall)
  async rollCall(@Payload() signal: RollCallSignal): Promise<void> {
    await this.controlPlane.onRollCall(signal);
  }

  @EventPattern(CONTROL_PATTERNS.present)
  present(@Payload() signal: PresentSignal): void {
    this.controlPlane.onPresent(signal);
  }

  @EventPattern(CONTROL_PATTERNS.keyRevoked)
  keyRevoked(@Payload() signal: KeyRevokedSignal): void {
    this.controlPlane.onKeyRevoked(signal);
  }

  @EventPattern(CONTROL_PATTERNS.userChanged)
  userChanged(@Payload() signal: UserChangedSignal): void {
    this.controlPlane.onUserChanged(signal);
  }

  @EventPattern(CONTROL_PATTERNS.adventureAppended)
  adventureAppended(@Payload() signal: AdventureAppendedSignal): void {
    this.controlPlane.onAppended(signal);
  }
}

/**
 * The control plane for one process. The app must also listen on the
 * transport (`app.connectMicroservice(controlPlaneTransport(redisUrl))` then
 * `startAllMicroservices()`), so the controller's patterns are subscribed.
 */
@Module({})
export class ControlPlaneModule {
  static forRoot(options: ControlPlaneOptions): DynamicModule {
    return {
      module: ControlPlaneModule,
      global: true,
      controllers: [ControlPlaneController],
      providers: [
        { provide: CONTROL_OPTIONS, useValue: options },
        {
          provide: CONTROL_CLIENT,
          useFactory: () => new ControlPlaneClient(options.redisUrl),
        },
        ControlPlane,
      ],
      exports: [ControlPlane],
    };
  }
}
