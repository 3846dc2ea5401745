import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The built API's entry, relative to the repository root. */
export const API_ENTRY = 'dist/apps/api/src/main.js';

/** How `npm start` runs the API: environment assignments, then `node`'s arguments. */
export interface ApiStartCommand {
  /** The script's leading `NAME=value` words (settings read when the process starts, e.g. glibc's). */
  env: Record<string, string>;
  /** The arguments after `node`: its flags, then the entry. */
  args: string[];
}

/**
 * How `npm start` runs the API: package.json's start script is
 * `[NAME=value …] node <flags> dist/apps/api/src/main.js`, and tests and the bench start it the
 * same way (`spawn(process.execPath, args, { env: { ...env, … } })`).
 * `root`: the repository's root (where package.json is).
 * @throws Error when the start script has another shape
 */
export function apiStartCommand(root: string): ApiStartCommand {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const words = manifest.scripts.start.trim().split(/\s+/);
  const node = words.indexOf('node');
  const assignments = words.slice(0, Math.max(node, 0)).map((word) => /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word));
  if (
    node < 0 ||
    assignments.some((match) => match === null) ||
    words.indexOf(API_ENTRY) !== words.length - 1
  ) {
    throw new Error(
      `package.json's start script is not "[NAME=value …] node <flags> ${API_ENTRY}": ${manifest.scripts.start}`,
    );
  }
  return {
    env: Object.fromEntries(assignments.map((match) => [match![1], match![2]])),
    args: words.slice(node + 1),
  };
}
