/* eslint-disable max-lines -- one table of every variable with its default, its meaning and its parser: the README's table and docker-compose.yml are checked against it, so it stays one list */
// Configuration comes from environment variables only, validated once at
// start-up: a bad value stops the process with a message naming the variable,
// rather than surfacing later as a confusing runtime failure. Every variable is
// declared here, once, with its default and meaning; the README's table and
// docker-compose.yml are written from this list.

import { readFileSync } from 'node:fs';
import {
  DEFAULT_MODEL_PRICES,
  parseModelPrices,
  PriceTableError,
  type ModelPriceTable,
} from './model-prices';
import { parseRedisUrl, RedisUrlError } from './redis-target';

export interface AppConfig {
  databaseUrl: string;
  databasePoolSize: number;
  databaseQueryTimeoutMs: number;
  databaseSlowQueryTimeoutMs: number;
  redisUrl: string;
  queuePrefix: string;
  host: string;
  port: number;
  /** A worker's /metrics port; undefined: its app's default (see libs/metrics). */
  metricsPort: number | undefined;
  logLevel: LogLevel;
  /** Where traces go (OTLP/HTTP); undefined: tracing is off (see libs/telemetry). */
  otlpEndpoint: string | undefined;
  modelBaseUrl: string;
  modelApiKey: string | undefined;
  modelName: string;
  modelTimeoutMs: number;
  modelPromptCacheKey: 'auto' | 'true' | 'false';
  modelCacheControl: boolean;
  /** MODEL_PRICES_FILE's table (empty without one); see `modelPriceTable`. */
  modelPricesFile: ModelPriceTable;
  /** MODEL_PRICES's table (empty without one); see `modelPriceTable`. */
  modelPrices: ModelPriceTable;
  embeddingModel: string;
  /**
   * Each background job's own endpoint, key and model (MEMORY_MODEL_*, SUMMARY_MODEL_*,
   * EMBEDDING_MODEL_*, MODERATION_MODEL_*); undefined: the narration's (see `jobModelConfig` in
   * libs/llm for the fallback rules).
   */
  memoryModelBaseUrl: string | undefined;
  memoryModelApiKey: string | undefined;
  memoryModelName: string | undefined;
  summaryModelBaseUrl: string | undefined;
  summaryModelApiKey: string | undefined;
  summaryModelName: string | undefined;
  embeddingModelBaseUrl: string | undefined;
  embeddingModelApiKey: string | undefined;
  moderationModelBaseUrl: string | undefined;
  moderationModelApiKey: string | undefined;
  moderationModelName: string | undefined;
  narrateAttempts: number;
  narrateConcurrency: number;
  narrateLockMs: number;
  narrateTurnDeadlineMs: number;
  reconcileIntervalMs: number;
  reconcileMaxRequeues: number;
  memoryConcurrency: number;
  scriptSandboxProcesses: number;
  scriptHookTimeoutMs: number;
  scriptTurnBudgetMs: number;
  scriptMemoryLimitMb: number;
  snapshotEvery: number;
  outboxSweepIntervalMs: number;
  shutdownTimeoutMs: number;
  adminApiKey: string | undefined;
  rateLimitTurnsPerMinute: number;
  rateLimitWritesPerMinute: number;
  rateLimitAnonPerMinute: number;
  rateLimitWindowSeconds: number;
  dailyTokenBudget: number;
  devKeyOnStart: DevKeyOnStart;
  logFormat: LogFormat;
  rateLimitReadsPerMinute: number;
  sseMaxPerKey: number;
  sseMaxConnections: number;
  turnStreamReaders: number;
  trustProxy: TrustProxy;
  /** The models an adventure's settings.model may name; empty: MODEL_NAME alone. */
  modelAllowed: string[];
  /** Requests per minute to the model provider (MODEL_BASE_URL + MODEL_API_KEY); 0: no limit. */
  modelRequestsPerMinute: number;
  /** Tokens per minute to the model provider; 0: no limit. */
  modelTokensPerMinute: number;
  modelLimitBurstSeconds: number;
  /** K: the turns of one user that narrate at once, across every worker; 0: no limit. */
  narrateMaxPerUser: number;
  /** The key webhook secrets are sealed with (32 bytes, base64); undefined: webhooks are off. */
  webhooksSecretKey: string | undefined;
  /** Webhooks may be registered to and delivered at private, loopback and link-local addresses. */
  webhooksAllowPrivateAddresses: boolean;
  webhooksAttempts: number;
  webhooksRetryBaseMs: number;
  webhooksTimeoutMs: number;
}

/** Express's `trust proxy`: false, true, a hop count, or addresses/subnets of the proxies. */
export type TrustProxy = boolean | number | string[];

/** The shortest ADMIN_API_KEY accepted: a guessable admin key is worse than none. */
export const ADMIN_API_KEY_MIN_LENGTH = 32;

/** The models an adventure may name on this installation (MODEL_ALLOWED, else MODEL_NAME alone). */
export function allowedModels(config: Pick<AppConfig, 'modelAllowed' | 'modelName'>): string[] {
  return config.modelAllowed.length > 0 ? config.modelAllowed : [config.modelName];
}

/**
 * How `npm start` shows its processes' logs. auto: a short human banner unless
 * NODE_ENV=production. The apps themselves always write JSON lines.
 */
export type LogFormat = 'auto' | 'json' | 'human';

/** auto: a development key on the first start unless NODE_ENV=production. */
export type DevKeyOnStart = 'auto' | 'true' | 'false';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

interface VariableSpec<K extends keyof AppConfig> {
  name: string;
  key: K;
  default: string | undefined;
  description: string;
  parse: (raw: string) => AppConfig[K];
  /** never printed, logged or echoed in an error */
  secret?: boolean;
}

class InvalidValue extends Error {}

const int =
  (min: number, max: number) =>
  (raw: string): number => {
    if (!/^-?\d+$/.test(raw.trim())) throw new InvalidValue(`must be a whole number`);
    const value = Number(raw);
    if (value < min || value > max) throw new InvalidValue(`must be between ${min} and ${max}`);
    return value;
  };

const url =
  (...protocols: string[]) =>
  (raw: string): string => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new InvalidValue(`must be a URL such as ${protocols[0]}//host:port`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new InvalidValue(`must start with ${protocols.join(' or ')}//`);
    }
    return raw;
  };

const text = (raw: string): string => raw;
const optional = (raw: string): string | undefined => (raw.trim() === '' ? undefined : raw.trim());

const slug = (raw: string): string => {
  if (!/^[a-zA-Z0-9_-]+$/.test(raw))
    throw new InvalidValue('may hold only letters, digits, - and _');
  return raw;
};

function prices(json: string): ModelPriceTable {
  try {
    return parseModelPrices(json);
  } catch (error) {
    if (error instanceof PriceTableError) throw new InvalidValue(error.message);
    throw error;
  }
}

/** The price table in force: the built-in one, then MODEL_PRICES_FILE's, then MODEL_PRICES's. */
export function modelPriceTable(
  config: Pick<AppConfig, 'modelPricesFile' | 'modelPrices'>,
): ModelPriceTable {
  return { ...DEFAULT_MODEL_PRICES, ...config.modelPricesFile, ...config.modelPrices };
}

// The order here is the order of the README table.
export const CONFIG_VARIABLES = [
  v(
    'DATABASE_URL',
    'databaseUrl',
    'postgres://postgres@127.0.0.1:5432/chronicle',
    'Postgres connection string. The database is created and migrated at start-up when missing.',
    url('postgres:', 'postgresql:'),
  ),
  v(
    'DATABASE_POOL_SIZE',
    'databasePoolSize',
    '10',
    "Connections in each process's pool.",
    int(1, 200),
  ),
  v(
    'DATABASE_QUERY_TIMEOUT_MS',
    'databaseQueryTimeoutMs',
    '2000',
    'How long one statement may wait for Postgres before the request answers 503 (a worker waits and tries again): bounds a query on an open connection to a server that stopped answering.',
    int(100, 600000),
  ),
  v(
    'DATABASE_SLOW_QUERY_TIMEOUT_MS',
    'databaseSlowQueryTimeoutMs',
    '120000',
    'The same bound for the legitimately slow work: importing or exporting a whole adventure, importing story cards, migrating.',
    int(100, 3600000),
  ),
  v(
    'REDIS_URL',
    'redisUrl',
    'redis://127.0.0.1:6379',
    'Redis for the job queues, turn streams, rate limits and the control plane: one server (`redis://`, `rediss://` for TLS) or a Redis Cluster named by any of its masters, `redis-cluster://[user:password@]host:port,host:port` (`rediss-cluster://` for TLS; see README, Redis Cluster). Use `noeviction` and AOF in production, on every master.',
    (raw) => {
      try {
        parseRedisUrl(raw);
      } catch (error) {
        if (error instanceof RedisUrlError) throw new InvalidValue(error.message);
        throw error;
      }
      return raw;
    },
  ),
  v(
    'QUEUE_PREFIX',
    'queuePrefix',
    'chronicle',
    "The installation's name: it begins every Redis key and channel message (BullMQ's as `{<prefix>:<queue>}`), so several installations can share one Redis.",
    slug,
  ),
  v(
    'HOST',
    'host',
    '0.0.0.0',
    "Interface the API listens on, and each worker's /metrics server.",
    text,
  ),
  v('PORT', 'port', '3000', 'Port the API listens on (its /metrics included).', int(1, 65535)),
  v(
    'METRICS_PORT',
    'metricsPort',
    '',
    "Port a worker serves /metrics on (behind ADMIN_API_KEY). Empty: 9464 for the context worker, 9465 for the memory worker, so `npm start`'s one of each fit on one host; several workers of one app on one host each need their own, or 0 (any free port, logged as `metricsPort`). The API serves /metrics on PORT.",
    (raw) => (raw.trim() === '' ? undefined : int(0, 65535)(raw)),
  ),
  v('LOG_LEVEL', 'logLevel', 'info', 'debug, info, warn or error.', (raw) => {
    if (!LOG_LEVELS.includes(raw as LogLevel))
      throw new InvalidValue(`must be one of ${LOG_LEVELS.join(', ')}`);
    return raw as LogLevel;
  }),
  v(
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'otlpEndpoint',
    '',
    "An OpenTelemetry collector's OTLP/HTTP endpoint (`http://collector:4318`): each process sends its traces to `<endpoint>/v1/traces`, one trace per turn across the API and the worker, and its log lines carry `trace_id` and `span_id`. Empty: no tracing (nothing is started or sent). The exporter also reads the other standard `OTEL_EXPORTER_OTLP_*` variables (headers, certificates) and the batch processor `OTEL_BSP_*`.",
    (raw) => (raw.trim() === '' ? undefined : url('http:', 'https:')(raw.trim())),
  ),
  v(
    'MODEL_BASE_URL',
    'modelBaseUrl',
    'https://api.openai.com/v1',
    'Any OpenAI-compatible endpoint: OpenAI, OpenRouter (https://openrouter.ai/api/v1), Ollama (http://localhost:11434/v1), vLLM, llama.cpp.',
    url('http:', 'https:'),
  ),
  {
    ...v(
      'MODEL_API_KEY',
      'modelApiKey',
      '',
      'Key for MODEL_BASE_URL. Empty: the built-in offline narrator and embedder answer instead (no network).',
      optional,
    ),
    secret: true,
  },
  v(
    'MODEL_NAME',
    'modelName',
    'gpt-4o-mini',
    'Default model for new adventures (each adventure may choose its own).',
    text,
  ),
  v(
    'MODEL_TIMEOUT_MS',
    'modelTimeoutMs',
    '120000',
    'Per-request timeout for model calls.',
    int(1000, 600000),
  ),
  v(
    'MODEL_PROMPT_CACHE_KEY',
    'modelPromptCacheKey',
    'auto',
    "Send each model call's adventure id as OpenAI's `prompt_cache_key`, so an adventure's turns reach the same prompt cache: auto (only when MODEL_BASE_URL is api.openai.com), true or false.",
    (raw) => {
      if (raw !== 'auto' && raw !== 'true' && raw !== 'false')
        throw new InvalidValue('must be auto, true or false');
      return raw;
    },
  ),
  v(
    'MODEL_CACHE_CONTROL',
    'modelCacheControl',
    'false',
    "Mark explicit prompt-cache breakpoints (`cache_control`, as Anthropic models through OpenRouter want them) at the end of the system block and at the history's newest block start: true or false.",
    (raw) => {
      if (raw !== 'true' && raw !== 'false') throw new InvalidValue('must be true or false');
      return raw === 'true';
    },
  ),
  v(
    'MODEL_PRICES_FILE',
    'modelPricesFile',
    '',
    'Path of a JSON file of model prices, `{"<model>": {"input": 0.15, "cachedInput": 0.075, "output": 0.6}}` in USD per million tokens, that overrides and extends the built-in table for the cost ledger (`GET /v1/usage`). Empty: the built-in table.',
    (raw) => {
      if (raw.trim() === '') return {};
      let text: string;
      try {
        text = readFileSync(raw.trim(), 'utf8');
      } catch {
        throw new InvalidValue('names a file that cannot be read');
      }
      return prices(text);
    },
  ),
  v(
    'MODEL_PRICES',
    'modelPrices',
    '',
    'Model prices as a JSON value of the same shape, applied over MODEL_PRICES_FILE and the built-in table. Empty: none.',
    (raw) => (raw.trim() === '' ? {} : prices(raw)),
  ),
  v(
    'EMBEDDING_MODEL',
    'embeddingModel',
    'text-embedding-3-small',
    'Embedding model for the memory bank (ignored by the offline embedder).',
    text,
  ),
  ...jobModelVariables('memory', 'MEMORY', 'memory writing (the memory pass)'),
  ...jobModelVariables(
    'summary',
    'SUMMARY',
    'summaries (the memory pass and "regenerate summary")',
  ),
  ...jobModelVariables('embedding', 'EMBEDDING', 'embeddings (memories and story passages)'),
  ...jobModelVariables(
    'moderation',
    'MODERATION',
    'moderation (reserved: the classifier hook of docs/operators is not built yet, nothing reads these)',
  ),
  v(
    'NARRATE_ATTEMPTS',
    'narrateAttempts',
    '3',
    'Attempts per turn before NarrationFailed is recorded; fixed when the turn is enqueued, and read back from the job by the worker.',
    int(1, 20),
  ),
  v(
    'NARRATE_CONCURRENCY',
    'narrateConcurrency',
    '16',
    'Turns one context worker runs at once.',
    int(1, 256),
  ),
  v(
    'NARRATE_LOCK_MS',
    'narrateLockMs',
    '30000',
    "How long a narrate job's lock lasts without renewal, and how often stalled jobs are looked for: a worker that died mid-turn has its job taken over within about twice this.",
    int(1000, 600000),
  ),
  v(
    'NARRATE_TURN_DEADLINE_MS',
    'narrateTurnDeadlineMs',
    '600000',
    'Longest a turn may stay in flight (queued, running or waiting for Postgres or Redis) before the reconciler ends it as NarrationFailed {code: "deadline"}.',
    int(1000, 86_400_000),
  ),
  v(
    'RECONCILE_INTERVAL_MS',
    'reconcileIntervalMs',
    '5000',
    'How often the reconciler (one active per installation, in a context worker) compares the turns in flight in Postgres with their jobs in Redis and re-enqueues a missing, failed or stalled one: a lost job is back in the queue within twice this.',
    int(100, 600_000),
  ),
  v(
    'RECONCILE_MAX_REQUEUES',
    'reconcileMaxRequeues',
    '3',
    'Times the reconciler re-enqueues one turn before it ends it as NarrationFailed {code: "lost"}.',
    int(0, 100),
  ),
  v(
    'MEMORY_CONCURRENCY',
    'memoryConcurrency',
    '2',
    'Memory jobs one memory worker runs at once.',
    int(1, 64),
  ),
  v(
    'SCRIPT_SANDBOX_PROCESSES',
    'scriptSandboxProcesses',
    '4',
    'Sandbox child processes the API and each context worker fork for scenario scripts; each runs one hook at a time.',
    int(1, 64),
  ),
  v(
    'SCRIPT_HOOK_TIMEOUT_MS',
    'scriptHookTimeoutMs',
    '2000',
    "Longest one script's hook (Library + hook) may run; past it the run counts as not having happened.",
    int(10, 60000),
  ),
  v(
    'SCRIPT_TURN_BUDGET_MS',
    'scriptTurnBudgetMs',
    '5000',
    'Longest all scripts and hooks of one turn may run together.',
    int(10, 120000),
  ),
  v(
    'SCRIPT_MEMORY_LIMIT_MB',
    'scriptMemoryLimitMb',
    '64',
    "Heap limit of a script's isolate (isolated-vm's memoryLimit; a guideline it may overshoot, so each sandbox process is also recycled past 512 MB RSS).",
    int(8, 1024),
  ),
  v(
    'SNAPSHOT_EVERY',
    'snapshotEvery',
    '50',
    'Events between snapshots of an adventure projection.',
    int(1, 100000),
  ),
  v(
    'OUTBOX_SWEEP_INTERVAL_MS',
    'outboxSweepIntervalMs',
    '5000',
    'How often outbox rows left behind by a crash are enqueued.',
    int(100, 3600000),
  ),
  v(
    'SHUTDOWN_TIMEOUT_MS',
    'shutdownTimeoutMs',
    '25000',
    'Longest graceful shutdown before in-flight jobs are released to another worker.',
    int(1000, 120000),
  ),
  {
    ...v(
      'ADMIN_API_KEY',
      'adminApiKey',
      '',
      `Admin key for /v1/admin routes (creating users and keys), at least ${ADMIN_API_KEY_MIN_LENGTH} characters. Empty: admin routes are closed.`,
      (raw) => {
        const key = optional(raw);
        if (key !== undefined && key.length < ADMIN_API_KEY_MIN_LENGTH) {
          throw new InvalidValue(
            `must be at least ${ADMIN_API_KEY_MIN_LENGTH} characters (it has ${key.length}); generate one with: openssl rand -hex 32`,
          );
        }
        return key;
      },
    ),
    secret: true,
  },
  v(
    'RATE_LIMIT_TURNS_PER_MINUTE',
    'rateLimitTurnsPerMinute',
    '10',
    'Turns (actions, continues, retries) one API key may start per window. Counted in Redis, so the limit holds across API instances.',
    int(1, 100000),
  ),
  v(
    'RATE_LIMIT_WRITES_PER_MINUTE',
    'rateLimitWritesPerMinute',
    '60',
    'Other writes (POST, PUT, PATCH, DELETE) one API key may make per window.',
    int(1, 100000),
  ),
  v(
    'RATE_LIMIT_ANON_PER_MINUTE',
    'rateLimitAnonPerMinute',
    '30',
    'Requests to /v1 without a valid key that one IP address may make per window; beyond it 429 instead of 401.',
    int(1, 100000),
  ),
  v(
    'RATE_LIMIT_WINDOW_SECONDS',
    'rateLimitWindowSeconds',
    '60',
    'Length of the rate-limit window (the limits above are per this many seconds).',
    int(1, 3600),
  ),
  v(
    'DAILY_TOKEN_BUDGET',
    'dailyTokenBudget',
    '1000000',
    "Model tokens (prompt + completion, from recorded usage) a user may spend per UTC day before new turns are refused; a user's own budget overrides it. 0: no budget. The offline narrator is free.",
    int(0, 2_000_000_000),
  ),
  v(
    'DEV_KEY_ON_START',
    'devKeyOnStart',
    'auto',
    'Create a `dev` user and print its API key at start-up when there are no users: auto (unless NODE_ENV=production), true or false.',
    (raw) => {
      if (raw !== 'auto' && raw !== 'true' && raw !== 'false')
        throw new InvalidValue('must be auto, true or false');
      return raw;
    },
  ),
  v(
    'LOG_FORMAT',
    'logFormat',
    'auto',
    '`npm start` output: auto (a short human banner with the URL, the docs and a sign-in link, and warnings and errors as lines, unless NODE_ENV=production), json (every JSON log line) or human.',
    (raw) => {
      if (raw !== 'auto' && raw !== 'json' && raw !== 'human')
        throw new InvalidValue('must be auto, json or human');
      return raw;
    },
  ),
  v(
    'RATE_LIMIT_READS_PER_MINUTE',
    'rateLimitReadsPerMinute',
    '600',
    'Reads (GET, HEAD) one API key may make per window, streams included.',
    int(1, 1_000_000),
  ),
  v(
    'SSE_MAX_PER_KEY',
    'sseMaxPerKey',
    '10',
    'Turn streams (SSE) one API key may hold open at once on one API instance; beyond it 429.',
    int(1, 100_000),
  ),
  v(
    'SSE_MAX_CONNECTIONS',
    'sseMaxConnections',
    '2000',
    'Turn streams (SSE) one API instance holds open at once, all keys together; beyond it 429.',
    int(1, 1_000_000),
  ),
  v(
    'TURN_STREAM_READERS',
    'turnStreamReaders',
    '2',
    "Redis subscriber connections one API instance's stream followers share, however many streams are open (each followed stream is one SUBSCRIBE on one of them).",
    int(1, 64),
  ),
  v(
    'TRUST_PROXY',
    'trustProxy',
    'false',
    'Which proxies in front of the API to believe about the client address (X-Forwarded-For), so the anonymous limit counts clients, not the proxy: false, true (any), a hop count, or comma-separated addresses/subnets (loopback, 10.0.0.0/8, …).',
    (raw) => {
      const value = raw.trim();
      if (value === '' || value === 'false') return false;
      if (value === 'true') return true;
      if (/^\d+$/.test(value)) return int(0, 100)(value);
      const entries = value.split(',').map((entry) => entry.trim());
      const address = /^(loopback|linklocal|uniquelocal|[0-9a-fA-F:.]+(\/\d{1,3})?)$/;
      const bad = entries.find((entry) => !address.test(entry));
      if (bad !== undefined) {
        throw new InvalidValue(
          `must be false, true, a hop count or comma-separated addresses/subnets ("${bad}" is none of these)`,
        );
      }
      return entries;
    },
  ),
  v(
    'MODEL_ALLOWED',
    'modelAllowed',
    '',
    "Comma-separated models an adventure's settings.model may name (422 otherwise). Empty: MODEL_NAME alone.",
    (raw) =>
      raw
        .split(',')
        .map((model) => model.trim())
        .filter((model) => model !== ''),
  ),
  v(
    'MODEL_REQUESTS_PER_MINUTE',
    'modelRequestsPerMinute',
    '0',
    "Narration requests per minute this installation's workers together send to the model provider key (MODEL_BASE_URL + MODEL_API_KEY), counted in Redis; a turn over it waits for its slot (no attempt spent). 0: no limit.",
    int(0, 10_000_000),
  ),
  v(
    'MODEL_TOKENS_PER_MINUTE',
    'modelTokensPerMinute',
    '0',
    "Tokens (prompt + completion) per minute the workers together spend on that key's narrations: each request reserves the key's recent average and is charged its real usage afterwards. 0: no limit.",
    int(0, 2_000_000_000),
  ),
  v(
    'MODEL_LIMIT_BURST_SECONDS',
    'modelLimitBurstSeconds',
    '10',
    'How far ahead of the steady rate the two limits above let a burst run, in seconds of it (60 RPM with 10: 10 requests at once, then one a second).',
    int(0, 60),
  ),
  v(
    'NARRATE_MAX_PER_USER',
    'narrateMaxPerUser',
    '4',
    "Turns of one user (an adventure's owner) that narrate at once across every context worker; the others wait in line, oldest first, without spending an attempt. 0: no limit.",
    int(0, 10_000),
  ),
  {
    ...v(
      'WEBHOOKS_SECRET_KEY',
      'webhooksSecretKey',
      '',
      "32 random bytes in base64 (`openssl rand -base64 32`) that seal each webhook's signing secret in the database, so a leaked dump alone cannot sign deliveries. Every API and memory worker needs the same one. Empty: webhooks are off (the routes answer 503).",
      (raw) => {
        const key = optional(raw);
        if (key !== undefined && Buffer.from(key, 'base64').length !== 32) {
          throw new InvalidValue(
            'must be 32 bytes in base64; generate one with: openssl rand -base64 32',
          );
        }
        return key;
      },
    ),
    secret: true,
  },
  v(
    'WEBHOOKS_ALLOW_PRIVATE_ADDRESSES',
    'webhooksAllowPrivateAddresses',
    'false',
    'Let webhooks be registered to and delivered at private, loopback and link-local addresses (a receiver on the same network): true or false. Off, such a URL is refused at registration and again at every delivery, after its name is resolved.',
    (raw) => {
      if (raw !== 'true' && raw !== 'false') throw new InvalidValue('must be true or false');
      return raw === 'true';
    },
  ),
  v(
    'WEBHOOKS_ATTEMPTS',
    'webhooksAttempts',
    '8',
    'Attempts per webhook delivery before it is given up; the waits between them double from WEBHOOKS_RETRY_BASE_MS.',
    int(1, 30),
  ),
  v(
    'WEBHOOKS_RETRY_BASE_MS',
    'webhooksRetryBaseMs',
    '10000',
    'The wait before the second attempt of a delivery; each next wait doubles (10 s, 20 s, 40 s, … with the defaults about 21 minutes in all).',
    int(10, 3_600_000),
  ),
  v(
    'WEBHOOKS_TIMEOUT_MS',
    'webhooksTimeoutMs',
    '10000',
    'Longest one delivery waits for its receiver (connect, answer and body) before the attempt counts as failed.',
    int(100, 120_000),
  ),
] as const satisfies readonly VariableSpec<keyof AppConfig>[];

type JobVariableKey =
  | `${'memory' | 'summary' | 'embedding' | 'moderation'}Model${'BaseUrl' | 'ApiKey'}`
  | `${'memory' | 'summary' | 'moderation'}ModelName`;

/**
 * A background job's three variables (two for embeddings, whose model is EMBEDDING_MODEL): each
 * empty by default, meaning the narration's endpoint, key and model.
 */
function jobModelVariables(
  job: 'memory' | 'summary' | 'embedding' | 'moderation',
  prefix: string,
  what: string,
): VariableSpec<JobVariableKey>[] {
  const specs: VariableSpec<JobVariableKey>[] = [
    v(
      `${prefix}_MODEL_BASE_URL`,
      `${job}ModelBaseUrl`,
      '',
      `OpenAI-compatible endpoint for ${what}. Empty: MODEL_BASE_URL.`,
      (raw) => (raw.trim() === '' ? undefined : url('http:', 'https:')(raw.trim())),
    ),
    {
      ...v(
        `${prefix}_MODEL_API_KEY`,
        `${job}ModelApiKey`,
        '',
        `Key for ${prefix}_MODEL_BASE_URL. Empty: MODEL_API_KEY, which is only ever sent to MODEL_BASE_URL (a ${prefix}_MODEL_BASE_URL of its own needs a key of its own; any non-empty one for a server that ignores keys).`,
        optional,
      ),
      secret: true,
    },
  ];
  if (job !== 'embedding') {
    specs.push(
      v(
        `${prefix}_MODEL_NAME`,
        `${job}ModelName`,
        '',
        `Model for ${what}, for every adventure. Empty: the adventure's own model (settings.model, else MODEL_NAME).`,
        optional,
      ),
    );
  }
  return specs;
}

function v<K extends keyof AppConfig>(
  name: string,
  key: K,
  defaultValue: string,
  description: string,
  parse: (raw: string) => AppConfig[K],
): VariableSpec<K> {
  return { name, key, default: defaultValue, description, parse };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * A job pointed at an endpoint of its own must name its key: MODEL_API_KEY is never sent to
 * another host, and silently falling back to the offline narrator would hide the mistake.
 */
function keysOfOwnEndpoints(config: AppConfig): string[] {
  const jobs = [
    ['MEMORY', config.memoryModelBaseUrl, config.memoryModelApiKey],
    ['SUMMARY', config.summaryModelBaseUrl, config.summaryModelApiKey],
    ['EMBEDDING', config.embeddingModelBaseUrl, config.embeddingModelApiKey],
    ['MODERATION', config.moderationModelBaseUrl, config.moderationModelApiKey],
  ] as const;
  return jobs
    .filter(
      ([, baseUrl, apiKey]) =>
        baseUrl !== undefined && baseUrl !== config.modelBaseUrl && apiKey === undefined,
    )
    .map(
      ([prefix]) =>
        `${prefix}_MODEL_API_KEY must be set when ${prefix}_MODEL_BASE_URL names another endpoint than MODEL_BASE_URL (MODEL_API_KEY is only sent to MODEL_BASE_URL; any non-empty key for a server that ignores keys)`,
    );
}

/** Reads and validates every variable; throws one ConfigError naming all bad ones. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const config: Partial<Record<keyof AppConfig, unknown>> = {};
  for (const spec of CONFIG_VARIABLES as readonly VariableSpec<keyof AppConfig>[]) {
    const raw = env[spec.name] ?? spec.default ?? '';
    try {
      config[spec.key] = spec.parse(raw);
    } catch (error) {
      if (!(error instanceof InvalidValue)) throw error;
      const shown = spec.secret ? '' : ` (got "${raw}")`;
      problems.push(`${spec.name} ${error.message}${shown}`);
    }
  }
  if (problems.length === 0) problems.push(...keysOfOwnEndpoints(config as AppConfig));
  if (problems.length > 0) throw new ConfigError(problems);
  return config as AppConfig;
}
