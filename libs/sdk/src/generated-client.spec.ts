import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const COMMITTED = resolve(__dirname, 'generated');

function filesUnder(folder: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(folder, path), readFileSync(path, 'utf8'));
    }
  };
  walk(folder);
  return files;
}

describe('the committed generated SDK client', () => {
  it('is what @hey-api/openapi-ts makes from docs/openapi.json (regenerate with `npm run openapi`)', () => {
    const out = mkdtempSync(join(tmpdir(), 'ledgerkey-sdk-generated-'));
    try {
      const run = spawnSync(
        process.execPath,
        [
          resolve(ROOT, 'node_modules/@hey-api/openapi-ts/bin/run.js'),
          '-f',
          'libs/sdk/openapi-ts.config.mjs',
          '-s',
        ],
        { cwd: ROOT, env: { ...process.env, LEDGERKEY_SDK_GENERATED_OUT: out }, encoding: 'utf8' },
      );
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      const expected = filesUnder(out);
      const committed = filesUnder(COMMITTED);
      const stale = [...new Set([...expected.keys(), ...committed.keys()])]
        .filter((file) => expected.get(file) !== committed.get(file))
        .sort();
      if (stale.length > 0) {
        throw new Error(
          `libs/sdk/src/generated is out of date with docs/openapi.json (${stale.join(', ')}). ` +
            'Run `npm run openapi` (or `npm run sdk:generate`) and commit the result.',
        );
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 30_000);
});
