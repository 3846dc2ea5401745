import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The built API's entry, relative to the repository root. */
export const API_ENTRY = 'dist/apps/api/src/main.js';

/**
 * The arguments after `node` with which `npm start` runs the API: package.json's start script is
 * `node <flags> dist/apps/api/src/main.js`, and tests and the bench start it the same way.
 * `root`: the repository's root (where package.json is).
 * @throws Error when the start script has another shape
 */
export function apiStartArgs(root: string): string[] {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const words = manifest.scripts.start.trim().split(/\s+/);
  const entry = words.indexOf(API_ENTRY);
  if (words[0] !== 'node' || entry !== words.length - 1) {
    throw new Error(
      `package.json's start script is not "node <flags> ${API_ENTRY}": ${manifest.scripts.start}`,
    );
  }
  return words.slice(1);
}
