import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/** The pure domain libraries: functions over plain data (docs/ARCHITECTURE.md). */
const PURE = ['narrative', 'context', 'scripting', 'adventure', 'lore', 'memory'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-restricted-imports': 'off',
    },
  },
  {
    // The pure domain stays pure: no Nest, database, Redis or model client.
    files: [
      'libs/context/**/*.ts',
      'libs/narrative/**/*.ts',
      'libs/adventure/**/*.ts',
      'libs/lore/**/*.ts',
      'libs/memory/**/*.ts',
      'libs/scripting/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*', 'pg', 'kysely', 'ioredis', 'bullmq', 'openai'],
              message: `the pure libs (${PURE.join(', ')}) are domain code.`,
            },
            {
              group: [
                '@chronicle/event-store',
                '@chronicle/queue',
                '@chronicle/llm',
                '@chronicle/platform',
                '@chronicle/telemetry',
                '@chronicle/turn-stream',
                '@chronicle/metrics',
                '@chronicle/accounts',
                '@chronicle/adventure-store',
                '@chronicle/memory-store',
              ],
              message: 'pure domain libs never import infrastructure libs.',
            },
          ],
        },
      ],
    },
  },
  // Dependencies point down (docs/ARCHITECTURE.md, "Libraries as layers"): the adapters at the
  // bottom import none of our libraries; the queue and the turn streams only the platform.
  ...[
    { lib: 'narrative', allowed: [] },
    { lib: 'context', allowed: ['narrative'] },
    { lib: 'scripting', allowed: [] },
    { lib: 'adventure', allowed: ['narrative', 'scripting'] },
    { lib: 'lore', allowed: ['adventure', 'context'] },
    { lib: 'memory', allowed: ['adventure', 'context'] },
    // OpenTelemetry, wrapped once: the SDK's start, our spans, the trace context across processes.
    { lib: 'telemetry', allowed: [] },
    { lib: 'platform', allowed: ['telemetry'] },
    { lib: 'event-store', allowed: [] },
    { lib: 'llm', allowed: [] },
    { lib: 'queue', allowed: ['platform', 'telemetry'] },
    { lib: 'turn-stream', allowed: ['platform'] },
    { lib: 'script-sandbox', allowed: ['platform', 'scripting'] },
    {
      lib: 'adventure-store',
      allowed: [...PURE, 'event-store', 'queue', 'platform', 'telemetry', 'webhooks'],
    },
    { lib: 'accounts', allowed: ['adventure', 'event-store', 'llm', 'platform'] },
    {
      lib: 'memory-store',
      allowed: [...PURE, 'accounts', 'adventure-store', 'event-store', 'llm', 'platform'],
    },
    // prom-client, wrapped once; it meters the model client, so it sits over llm.
    { lib: 'metrics', allowed: ['platform', 'llm'] },
    // The typed client runs in browsers and bots: it takes turn-stream's frames module by its
    // path (not the barrel, which holds Redis), and nothing else of ours.
    { lib: 'client', allowed: [] },
    // Registrations, signing, target checks and deliveries; the event mapping reads the
    // adventure's event types, so adventure-store's jobsAfter can ask it.
    { lib: 'webhooks', allowed: ['adventure', 'event-store', 'queue', 'platform'] },
  ].map(({ lib, allowed }) => ({
    files: [`libs/${lib}/src/**/*.ts`],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts', '**/testing/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^@chronicle/(?!(${[lib, 'testing', ...allowed].join('|')})(/|$))`,
              message: `libs/${lib} may import only ${allowed.length ? allowed.map((l) => `libs/${l}`).join(', ') : 'none of our libraries'} (docs/ARCHITECTURE.md).`,
            },
          ],
        },
      ],
    },
  })),
  {
    // Production code reads in one sitting: a longer file or function says why in a comment
    // (an eslint-disable with its reason), as the decider's and the projector's switches do.
    files: ['apps/**/src/**/*.{ts,tsx}', 'libs/**/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts', '**/testing/**', '**/migrations/**'],
    rules: {
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['warn', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
);
