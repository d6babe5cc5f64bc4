// Configuration comes from environment variables only, validated once at
// start-up: a bad value stops the process with a message naming the variable,
// rather than surfacing later as a confusing runtime failure. Every variable is
// declared here, once, with its default and meaning; the README's table and
// docker-compose.yml are written from this list.

export interface AppConfig {
  databaseUrl: string;
  databasePoolSize: number;
  redisUrl: string;
  queuePrefix: string;
  host: string;
  port: number;
  logLevel: LogLevel;
  modelBaseUrl: string;
  modelApiKey: string | undefined;
  modelName: string;
  modelTimeoutMs: number;
  embeddingModel: string;
  narrateAttempts: number;
  narrateConcurrency: number;
  narrateLockMs: number;
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
}

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
    'REDIS_URL',
    'redisUrl',
    'redis://127.0.0.1:6379',
    'Redis for the job queues, turn streams, rate limits and the control plane. Use `noeviction` and AOF in production.',
    url('redis:', 'rediss:'),
  ),
  v(
    'QUEUE_PREFIX',
    'queuePrefix',
    'chronicle',
    'Prefix of every BullMQ key, so several installations can share one Redis.',
    slug,
  ),
  v('HOST', 'host', '0.0.0.0', 'Interface the API listens on.', text),
  v('PORT', 'port', '3000', 'Port the API listens on.', int(1, 65535)),
  v('LOG_LEVEL', 'logLevel', 'info', 'debug, info, warn or error.', (raw) => {
    if (!LOG_LEVELS.includes(raw as LogLevel))
      throw new InvalidValue(`must be one of ${LOG_LEVELS.join(', ')}`);
    return raw as LogLevel;
  }),
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
    'EMBEDDING_MODEL',
    'embeddingModel',
    'text-embedding-3-small',
    'Embedding model for the memory bank (ignored by the offline embedder).',
    text,
  ),
  v(
    'NARRATE_ATTEMPTS',
    'narrateAttempts',
    '3',
    'Attempts per turn before NarrationFailed is recorded.',
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
      'Admin key for /v1/admin routes (creating users and keys). Empty: admin routes are closed.',
      optional,
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
] as const satisfies readonly VariableSpec<keyof AppConfig>[];

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
  if (problems.length > 0) throw new ConfigError(problems);
  return config as AppConfig;
}
