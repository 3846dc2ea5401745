import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const CONFIG = require(join(ROOT, '.dependency-cruiser.js')) as { forbidden: Array<{ name: string }> };

/**
 * A small repository that breaks every rule once, cruised with the real configuration the way
 * `npm run lint` cruises ours (same command, same config file).
 */
const FIXTURE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      baseUrl: '.',
      paths: { '@ledgerkey/a': ['libs/a/src'], '@ledgerkey/b': ['libs/b/src'] },
    },
  }),
  // no-app-to-app, app-and-test-only-through-lib-index, lib-index-through-alias, not-to-unresolvable
  'apps/api/src/main.ts': [
    "import { jobs } from '../../worker/src/job-runner';",
    "import { inner } from '../../../libs/a/src/inner';",
    "import { b } from '../../../libs/b/src';",
    "import { a } from '@ledgerkey/a';",
    "import { gone } from '@ledgerkey/gone';",
    'export const all = [jobs, inner, b, a, gone];',
  ].join('\n'),
  'apps/worker/src/job-runner.ts': 'export const jobs = 1;',
  // provider-sandbox-standalone
  'apps/provider-sandbox/src/main.ts': "import { a } from '@ledgerkey/a';\nexport const sandbox = a;",
  'libs/a/src/index.ts': "export { inner } from './inner';\nexport const a = 1;",
  // no-circular (a → b → a), no-test-code-in-production
  'libs/a/src/inner.ts': [
    "import { b } from '@ledgerkey/b';",
    "import { helper } from '../../../test/support/helper';",
    'export const inner = [b, helper];',
  ].join('\n'),
  // lib-only-through-index, libs-not-to-apps-or-migrations
  'libs/b/src/index.ts': [
    "import { a } from '@ledgerkey/a';",
    "import { inner } from '../../a/src/inner';",
    "import { jobs } from '../../../apps/worker/src/job-runner';",
    'export const b = [a, inner, jobs];',
  ].join('\n'),
  // migrations-are-snapshots (a lib through its alias, a lib file by path, an app)
  'migrations/1-initial.ts': [
    "import { a } from '@ledgerkey/a';",
    "import { inner } from '../libs/a/src/inner';",
    "import { jobs } from '../apps/worker/src/job-runner';",
    'export const up = [a, inner, jobs];',
  ].join('\n'),
  // sdk-standalone
  'libs/sdk/src/index.ts': "import { a } from '@ledgerkey/a';\nexport const sdk = a;",
  // app-and-test-only-through-lib-index (a test reaching into a lib)
  'test/e2e/a.e2e-spec.ts': "import { inner } from '../../libs/a/src/inner';\nexport const t = inner;",
  'test/support/helper.ts': 'export const helper = 1;',
};

describe('dependency rules (.dependency-cruiser.js, run by npm run lint)', () => {
  let fixture: string;

  beforeAll(() => {
    fixture = mkdtempSync(join(tmpdir(), 'ledgerkey-depcruise-'));
    for (const [file, text] of Object.entries(FIXTURE)) {
      mkdirSync(dirname(join(fixture, file)), { recursive: true });
      writeFileSync(join(fixture, file), `${text}\n`);
    }
  });
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('fails on a violation, naming the rule and both files; every rule bites', () => {
    const run = spawnSync(
      process.execPath,
      [DEPCRUISE, 'apps', 'libs', 'migrations', 'test', '--config', join(ROOT, '.dependency-cruiser.js')],
      { cwd: fixture, encoding: 'utf8' },
    );
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status).not.toBe(0);
    expect(output).toContain('error no-app-to-app: apps/api/src/main.ts → apps/worker/src/job-runner.ts');
    for (const target of ['libs/a/src/index.ts', 'libs/a/src/inner.ts', 'apps/worker/src/job-runner.ts']) {
      expect(output).toContain(`error migrations-are-snapshots: migrations/1-initial.ts → ${target}`);
    }
    const violated = new Set([...output.matchAll(/^\s*error ([a-z-]+):/gm)].map((match) => match[1]));
    expect([...violated].sort()).toEqual(CONFIG.forbidden.map((rule) => rule.name).sort());
  });

  it('runs in npm run lint', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { scripts } = require(join(ROOT, 'package.json')) as { scripts: Record<string, string> };
    expect(scripts.lint).toContain('npm run lint:boundaries');
    expect(scripts['lint:boundaries']).toBe(
      'depcruise apps libs migrations test --config .dependency-cruiser.js',
    );
  });
});
