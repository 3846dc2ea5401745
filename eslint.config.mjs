import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A class extending pg's or TypeORM's (by the name it is imported under, bare or qualified). */
const LIBRARY_NAMES =
  '/^(Query|Client|Pool|PoolClient|Connection|DataSource|EntityManager|QueryRunner|Repository|BaseEntity|QueryFailedError|TypeORMError)$/';
const LIBRARY_CLASS = `:matches([SUPER.name=${LIBRARY_NAMES}], [SUPER.property.name=${LIBRARY_NAMES}])`;

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
    // Dependencies through their public features only (pg's named statements and pipeline mode,
    // nestjs-cls's adapter interface): no deep imports of their private modules, no subclass or patch
    // of their classes. A gain that needs one is a design to change (conventions.md, "Speed from the
    // design, not from patches"). Before the idempotency core's block, whose stricter list wins there.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['pg/*', 'pg-pool/*', 'pg-protocol/*', 'typeorm/*', '@nestjs-cls/*/dist/*'],
              message: "Use the package's public entry point: its private modules change without notice.",
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.name='require'][arguments.0.value=/^(pg|pg-pool|pg-protocol|typeorm)\\x2F/]",
          message: "Use the package's public entry point: its private modules change without notice.",
        },
        {
          selector: `:matches(ClassDeclaration, ClassExpression)${LIBRARY_CLASS.replace(/SUPER/g, 'superClass')}`,
          message: 'Do not subclass pg or TypeORM classes: use their public options and events.',
        },
        {
          selector:
            "MemberExpression[property.name='prototype'][object.name=/^(Query|Client|Pool|PoolClient)$/]",
          message: "Do not reach into pg's prototypes: use their public options and events.",
        },
        {
          // One request path: global enhancers come as APP_* providers, which the replay front door
          // checks (apps/api/src/replay-front-door/front-door-coverage.ts); app.useGlobal*() and the
          // HTTP adapter's request hooks would reach the framework's path and not the front door's.
          selector:
            'CallExpression[callee.property.name=/^(useGlobalGuards|useGlobalInterceptors|useGlobalPipes|useGlobalFilters|setOnRequestHook|setOnResponseHook)$/]',
          message:
            'Register global enhancers as APP_* providers, which the replay front door checks; no request hooks.',
        },
      ],
    },
  },
  {
    // The idempotency protocol is framework-free; Nest, Express and SQL live in its adapters.
    files: [
      'libs/idempotency/src/idempotency-protocol.ts',
      'libs/idempotency/src/idempotent-executor.ts',
      'libs/idempotency/src/replays.ts',
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
);
