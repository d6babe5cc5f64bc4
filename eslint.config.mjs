import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

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
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@nestjs/*', 'pg', 'kysely', 'ioredis', 'bullmq', 'openai'],
              message: 'libs/context, libs/narrative and libs/adventure are pure domain code.',
            },
            {
              group: [
                '@chronicle/event-store',
                '@chronicle/queue',
                '@chronicle/llm',
                '@chronicle/platform',
              ],
              message: 'pure domain libs never import infrastructure libs.',
            },
          ],
        },
      ],
    },
  },
);
