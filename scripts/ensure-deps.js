// Runs before `npm start` and `npm test` (npm's pre-scripts): on a fresh clone
// it installs the locked dependencies first, so the quick start stays two
// commands. Plain JavaScript because nothing is installed yet when it runs.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');
const { missingBuildTools, nativeBuildEnv } = require('./native-build-env');

const root = join(__dirname, '..');
if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) {
  console.error('Installing dependencies from package-lock.json (first run)…');
  const missing = missingBuildTools();
  if (missing.length > 0) {
    // isolated-vm builds from source when no prebuilt binary can be downloaded.
    console.error(`warning: ${missing.join(', ')} not found; isolated-vm may fail to build`);
  }
  execSync('npm ci --no-audit --no-fund --loglevel=error', {
    cwd: root,
    stdio: 'inherit',
    env: nativeBuildEnv(),
  });
}
