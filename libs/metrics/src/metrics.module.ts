import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { AppConfig } from '@chronicle/platform';
import { ChronicleMetrics, type MetricsApp } from './chronicle-metrics';
import { TurnTimer } from './metered-model.client';
import { MetricsServer, type MetricsServerOptions } from './metrics.server';

/** Where a worker serves /metrics when METRICS_PORT is not set: one of each fits on one host. */
export const DEFAULT_METRICS_PORTS: Readonly<Record<Exclude<MetricsApp, 'api'>, number>> = {
  'context-worker': 9464,
  'memory-worker': 9465,
};

/** A worker's /metrics server from configuration: HOST, METRICS_PORT, ADMIN_API_KEY. */
export function workerMetricsServer(
  app: Exclude<MetricsApp, 'api'>,
  config: Pick<AppConfig, 'host' | 'metricsPort' | 'adminApiKey'>,
  isAdminKey: (token: string, adminKey: string) => boolean,
): MetricsServerOptions {
  const adminKey = config.adminApiKey;
  return {
    host: config.host,
    port: config.metricsPort ?? DEFAULT_METRICS_PORTS[app],
    isAdminKey: (token) => adminKey !== undefined && isAdminKey(token, adminKey),
    ...(adminKey === undefined && {
      closedBecause:
        'metrics are closed on this installation: set ADMIN_API_KEY and send it as "Authorization: Bearer <ADMIN_API_KEY>"',
    }),
  };
}

export interface MetricsModuleOptions {
  app: MetricsApp;
  /** A worker's own /metrics server; the API serves /metrics on its HTTP port instead. */
  server?: MetricsServerOptions;
}

const METRICS_SERVER = Symbol('METRICS_SERVER');

@Injectable()
class MetricsServerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');

  constructor(@Inject(METRICS_SERVER) private readonly server: MetricsServer | null) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.server) return;
    const port = await this.server.listen();
    this.logger.log({ msg: 'metrics listening', metricsPort: port, path: '/metrics' });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}

/** One ChronicleMetrics per process (global), and a worker's /metrics server. */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(options: MetricsModuleOptions): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        { provide: ChronicleMetrics, useFactory: () => new ChronicleMetrics(options.app) },
        {
          provide: TurnTimer,
          useFactory: (m: ChronicleMetrics) => new TurnTimer(m),
          inject: [ChronicleMetrics],
        },
        {
          provide: METRICS_SERVER,
          useFactory: (metrics: ChronicleMetrics) =>
            options.server ? new MetricsServer(metrics, options.server) : null,
          inject: [ChronicleMetrics],
        },
        MetricsServerLifecycle,
      ],
      exports: [ChronicleMetrics, TurnTimer],
    };
  }
}
