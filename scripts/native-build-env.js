// isolated-vm (the script sandbox, libs/script-sandbox) is a native addon. Its install tries a
// prebuilt download first and then compiles with node-gyp, which needs g++, make and python3
// and the headers of the running Node. node-gyp downloads those headers unless told where they
// are; pointing it at the installation's own include/node (Debian's nodejs, the node:20 images
// and nvm all ship them) makes the build work offline. Plain JavaScript: it runs before
// anything is installed (scripts/ensure-deps.js, .ci/run).
const { existsSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { execSync } = require('node:child_process');

/** The prefix whose include/node holds this Node's headers, or null. */
function nodeHeadersDir() {
  const prefix = dirname(dirname(process.execPath));
  return existsSync(join(prefix, 'include', 'node', 'node.h')) ? prefix : null;
}

/** The build tools node-gyp needs that are not on PATH. */
function missingBuildTools() {
  return ['g++', 'make', 'python3'].filter((tool) => {
    try {
      execSync(`command -v ${tool}`, { stdio: 'ignore', shell: '/bin/sh' });
      return false;
    } catch {
      return true;
    }
  });
}

/** process.env plus npm_config_nodedir when the headers are local and none is set. */
function nativeBuildEnv() {
  const env = { ...process.env };
  const headers = nodeHeadersDir();
  if (!env.npm_config_nodedir && headers) env.npm_config_nodedir = headers;
  return env;
}

module.exports = { nodeHeadersDir, missingBuildTools, nativeBuildEnv };

if (require.main === module) {
  // `node scripts/native-build-env.js`: prints the nodedir for shell scripts (empty if none),
  // and warns on stderr about missing tools.
  const missing = missingBuildTools();
  if (missing.length > 0) {
    console.error(
      `isolated-vm compiles from source and needs ${missing.join(', ')} ` +
        '(Debian: apt-get install -y g++ make python3)',
    );
  }
  console.log(nodeHeadersDir() ?? '');
}
