import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

describe('dependency graph in docs/decisions/0044-layout-and-boundaries.md', () => {
  it('is the graph of the code as it is (else: npm run docs:graph)', () => {
    const check = spawnSync(process.execPath, [join(ROOT, 'scripts/dependency-graph.mjs'), '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(`${check.stderr}${check.stdout}`).toBe('');
    expect(check.status).toBe(0);
  });
});
