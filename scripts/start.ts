// `npm start`: the whole system on one machine — the API and both workers as
// three processes, as they run in production (docker-compose.yml runs the same
// entry points as separate containers). Each process migrates at start-up
// under an advisory lock, so starting all three at once is safe.
//
// The apps write JSON log lines. In development (LOG_FORMAT=auto without
// NODE_ENV=production) this script reads them and prints a short banner
// instead — where the client is, where the docs are, and a link that opens the
// client signed in with the development key — then only warnings and errors.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ConfigError, loadConfig, NODE_RUNTIME_FLAGS, type AppConfig } from '@chronicle/platform';
import { StartBanner } from './start-banner';

const APPS = ['api', 'context-worker', 'memory-worker'] as const;
const root = join(__dirname, '..');

let config: AppConfig;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(78); // EX_CONFIG
}
const human =
  config.logFormat === 'human' ||
  (config.logFormat === 'auto' && process.env.NODE_ENV !== 'production');
const banner = human
  ? new StartBanner(config, APPS.length, (text) => process.stdout.write(text))
  : null;

const children = new Map<string, ChildProcess>();
let stopping = false;
let exitCode = 0;

function stopAll(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill(signal);
}

for (const app of APPS) {
  const child = spawn(
    process.execPath,
    [...NODE_RUNTIME_FLAGS, join(root, 'apps', app, 'src', 'main.js')],
    {
      stdio: ['inherit', banner ? 'pipe' : 'inherit', 'inherit'],
      env: process.env,
    },
  );
  if (banner && child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => banner.line(line));
  }
  children.set(app, child);
  child.on('exit', (code, signal) => {
    children.delete(app);
    if (!stopping) {
      // One process failing leaves the system unusable: stop the others and
      // report, rather than half-run.
      process.stderr.write(`${app} exited (${signal ?? code}); stopping the others\n`);
      exitCode = code || 1;
      stopAll('SIGTERM');
    }
    if (children.size === 0) process.exit(exitCode);
  });
}

process.on('SIGINT', () => stopAll('SIGTERM'));
process.on('SIGTERM', () => stopAll('SIGTERM'));
