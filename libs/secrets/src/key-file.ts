import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseSecretsKey, SECRETS_KEY_BYTES } from './secrets-key';
import { InvalidSecretsKeyError } from './secrets.errors';

export interface KeyFile {
  key: Buffer;
  /** True when this call wrote the file. */
  created: boolean;
  /** True when group or others may read the file (it should be 0600). */
  readableByOthers: boolean;
}

/**
 * The key in `path`, created first when the file does not exist (zero-setup start). Creation is
 * safe for processes starting at the same time: each writes a complete key into a file of its
 * own (O_CREAT | O_EXCL, mode 0600, fsynced), and `link(2)` publishes it under `path` only if
 * nothing is there yet; the losers drop theirs. Every caller then reads `path` back, so all of
 * them use the one key that won, and no reader ever sees a half-written file.
 * @throws InvalidSecretsKeyError when the existing file does not hold a key
 * @throws Error (errno) when the folder or file cannot be created or read
 */
export async function loadOrCreateKeyFile(path: string): Promise<KeyFile> {
  let created = false;
  if (!(await exists(path))) {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const candidate = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await open(candidate, 'wx', 0o600);
    try {
      await handle.writeFile(`${randomBytes(SECRETS_KEY_BYTES).toString('base64')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(candidate, path);
      created = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      await unlink(candidate);
    }
  }
  let key: Buffer;
  try {
    key = parseSecretsKey(await readFile(path, 'utf8'));
  } catch (error) {
    if (!(error instanceof InvalidSecretsKeyError)) throw error;
    throw new InvalidSecretsKeyError(
      `${path} ${error.message}: restore the file, or set SECRETS_KEY to the key the stored secrets were sealed with`,
    );
  }
  const { mode } = await stat(path);
  return { key, created, readableByOthers: (mode & 0o077) !== 0 };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
