// One jest run covers every kind of test: pure specs beside their subject
// (*.spec.ts), integration specs on the real Postgres and Redis (*.int-spec.ts)
// and end-to-end specs that start the built apps as processes (*.e2e-spec.ts).
// swc transpiles without type-checking; `npm run build` (run first by
// `npm test`) is the type check.
const { readFileSync } = require('node:fs');
const swcrc = JSON.parse(readFileSync(`${__dirname}/.swcrc`, 'utf8'));
delete swcrc.jsc.baseUrl;
delete swcrc.jsc.paths;
delete swcrc.$schema;

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/{apps,libs,test,scripts}/**/*.{spec,int-spec,e2e-spec}.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  moduleNameMapper: {
    '^@chronicle/testing$': '<rootDir>/test/support',
    // Test factories are not in a library's barrel: tests take them from `<lib>/testing`.
    '^@chronicle/([a-z-]+)/testing$': '<rootDir>/libs/$1/src/testing',
    '^@chronicle/(.*)$': '<rootDir>/libs/$1/src',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  testTimeout: 30000,
  maxWorkers: 2,
  // Suites that boot Nest, BullMQ and the openai client leave a worker's heap near 600 MB;
  // a process that large takes longer than jest's 500 ms to exit, which jest reports as a
  // leak. Recycling a worker past this size keeps every worker small enough to exit cleanly.
  workerIdleMemoryLimit: '512MB',
};
