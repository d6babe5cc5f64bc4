// `npm start`: the whole system on one machine — the API and both workers as
// three processes, as they run in production (docker-compose.yml runs the same
// entry points as separate containers). Each process migrates at start-up
// under an advisory lock, so starting all three at once is safe.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { NODE_RUNTIME_FLAGS } from '@chronicle/platform';

const APPS = ['api', 'context-worker', 'memory-worker'] as const;
const root = join(__dirname, '..');

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
      stdio: 'inherit',
      env: process.env,
    },
  );
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
