import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      'coverage/**',
      '**/*.js',
      '**/*.mjs',
      'libs/sdk/dist/**',
      'libs/sdk/src/generated/**',
      'test-artifacts/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.handler-spec.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // The idempotency protocol is framework-free; Nest, Express and SQL live in its adapters.
    files: [
      'libs/idempotency/src/idempotency-protocol.ts',
      'libs/idempotency/src/external-effect.ts',
      'libs/idempotency/src/idempotency-state-machine.ts',
      'libs/idempotency/src/idempotency-record.ts',
      'libs/idempotency/src/idempotency-ports.ts',
      'libs/idempotency/src/idempotency.errors.ts',
      'libs/idempotency/src/idempotency.observer.ts',
      'libs/idempotency/src/idempotency-key.ts',
      'libs/idempotency/src/fingerprint.ts',
      'libs/idempotency/src/replay-cache.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@nestjs/*',
                '@nestjs-cls/*',
                'nestjs-cls',
                'express',
                'rxjs',
                'typeorm',
                'pg',
                '@ledgerkey/*',
              ],
              message: 'The idempotency core is framework-free: put this in an adapter.',
            },
          ],
        },
      ],
    },
  },
  {
    // One request path: global enhancers come as APP_* providers, which the replay front door checks
    // (apps/api/src/replay-front-door/front-door-coverage.ts); app.useGlobal*() and the HTTP
    // adapter's request hooks would reach the framework's path and not the front door's.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'CallExpression[callee.property.name=/^(useGlobalGuards|useGlobalInterceptors|useGlobalPipes|useGlobalFilters|setOnRequestHook|setOnResponseHook)$/]',
          message:
            'Register global enhancers as APP_* providers, which the replay front door checks; no request hooks.',
        },
      ],
    },
  },
);
