import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateKeyFile } from './key-file';
import { InvalidSecretsKeyError } from './secrets.errors';

describe('loadOrCreateKeyFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerkey-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a 32-byte key with mode 0600 (creating the folder), then reads the same key back', async () => {
    const path = join(dir, 'data', 'secrets.key');
    const first = await loadOrCreateKeyFile(path);
    expect(first.created).toBe(true);
    expect(first.key).toHaveLength(32);
    expect(first.readableByOthers).toBe(false);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64')).toEqual(first.key);
    const again = await loadOrCreateKeyFile(path);
    expect(again).toEqual({ key: first.key, created: false, readableByOthers: false });
  });

  it('callers starting together agree on one key, and leave no temporary files', async () => {
    const path = join(dir, 'secrets.key');
    const results = await Promise.all(Array.from({ length: 12 }, () => loadOrCreateKeyFile(path)));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    for (const result of results) expect(result.key).toEqual(results[0].key);
    expect(readdirSync(dir)).toEqual(['secrets.key']);
  });

  it('fails clearly on a file that holds no key, naming the file', async () => {
    const path = join(dir, 'secrets.key');
    writeFileSync(path, 'not a key\n', { mode: 0o600 });
    await expect(loadOrCreateKeyFile(path)).rejects.toThrow(InvalidSecretsKeyError);
    await expect(loadOrCreateKeyFile(path)).rejects.toThrow(`${path} must be base64`);
  });

  it('reports a key file that others can read', async () => {
    const path = join(dir, 'secrets.key');
    writeFileSync(path, `${Buffer.alloc(32, 1).toString('base64')}\n`, { mode: 0o644 });
    expect((await loadOrCreateKeyFile(path)).readableByOthers).toBe(true);
  });
});
