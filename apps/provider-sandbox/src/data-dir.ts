import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const LOCK_FILE = 'sandbox.lock';

/**
 * One sandbox process per data dir: `sandbox.lock` holds the owner's pid (created with O_EXCL).
 * A lock whose pid is gone (a SIGKILLed sandbox), or is this process's own pid (a container's
 * pid 1 after a restart), is stale and taken over; a live owner is waited for up to `waitMs` (a
 * sandbox started while the previous one is still stopping), then the start fails.
 * @returns a release function (removes the file; a crash leaves it, and the next start takes it over)
 * @throws Error naming the owner's pid when it did not exit within `waitMs`
 */
export async function acquireDataDirLock(dataDir: string, waitMs: number): Promise<() => Promise<void>> {
  const path = join(dataDir, LOCK_FILE);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return async () => {
        await unlink(path).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (!Number.isSafeInteger(owner) || owner <= 0 || owner === process.pid || !isAlive(owner)) {
      await unlink(path).catch(() => undefined);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `${dataDir} is used by another provider sandbox (pid ${owner}); stop it or use another PROVIDER_SANDBOX_DATA_DIR`,
      );
    }
    await sleep(100);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The secret in `<dataDir>/<name>`, written first (mode 600, fsynced) with `generate()` when the
 * file does not exist. Only the lock holder calls it, so there is no race to settle.
 */
export async function loadOrCreateSecretFile(
  dataDir: string,
  name: string,
  generate: () => string,
): Promise<{ value: string; created: boolean }> {
  const path = join(dataDir, name);
  try {
    return { value: (await readFile(path, 'utf8')).trim(), created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const value = generate();
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(`${value}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { value, created: true };
}
