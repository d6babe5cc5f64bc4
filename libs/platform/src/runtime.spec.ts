import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_RUNTIME_FLAGS } from './runtime';

const root = join(__dirname, '..', '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('the V8 flags of every process', () => {
  const flags = NODE_RUNTIME_FLAGS.join(' ');

  it('given the flags in runtime.ts, then the scripts that run code in-process write the same', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts.bench).toContain(`node ${flags} dist/bench/run.js`);
    expect(scripts.replay).toContain(`node ${flags} dist/scripts/replay.js`);
  });

  it('given the flags in runtime.ts, then the Dockerfile and every service of docker-compose.yml start node with them', () => {
    const quoted = NODE_RUNTIME_FLAGS.map((flag) => `"${flag}"`).join(', ');
    expect(read('Dockerfile')).toContain(`CMD ["node", ${quoted}, `);
    const compose = read('docker-compose.yml');
    const commands = compose.match(/command: \['node'[^\]]*\]/g) ?? [];
    expect(commands).toHaveLength(3);
    for (const command of commands) {
      expect(command).toContain(`['node', ${NODE_RUNTIME_FLAGS.map((f) => `'${f}'`).join(', ')}, `);
    }
  });
});
