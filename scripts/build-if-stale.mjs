// `npm run cli` and `npm run migration:run`: builds only when dist/ is older than the sources, so an
// operator's command does not pay a full `nest build` on every call. The build's own output goes to
// stderr: stdout stays the command's (`npm run -s cli -- … --json` prints JSON only).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** What `npm run build` compiles (and how): a change to any of these makes dist/ stale. */
const SOURCES = ['apps', 'libs', 'migrations', 'tsconfig.json', 'nest-cli.json', 'package-lock.json'];
const SKIP = new Set(['node_modules', 'dist', 'libs/sdk']);
/** What `npm run build` writes last-ish, one per app; a missing one means "build". */
const OUTPUTS = ['api', 'worker', 'provider-sandbox'].map((app) => `dist/apps/${app}/src/main.js`);

/** Newest modification time under `path` (directories count too: a deleted file changes its folder). */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) {
    const child = join(path, entry);
    if (SKIP.has(entry) || SKIP.has(child.slice(ROOT.length + 1))) continue;
    latest = Math.max(latest, newest(child));
  }
  return latest;
}

function oldestOutput() {
  try {
    return Math.min(...OUTPUTS.map((file) => statSync(join(ROOT, file)).mtimeMs));
  } catch {
    return -Infinity;
  }
}

const stale = Math.max(...SOURCES.map((path) => newest(join(ROOT, path)))) > oldestOutput();
// `--check`: only say (exit 3 when stale), build nothing.
if (process.argv.includes('--check')) process.exit(stale ? 3 : 0);
if (stale) {
  process.stderr.write('dist/ is older than the sources: building (npm run build)\n');
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  process.exit(build.status ?? 1);
}
