import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/** Every non-test TypeScript file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.ts$/.test(entry.name) && !/spec\.ts$/.test(entry.name) ? [path] : [];
  });
}

/**
 * The API imports `TenancyModule.forRoot(...)`, whose providers hold process state (the revocation
 * listener, the verified-key cache, the rate limiter's buckets). Nest builds the plain
 * `TenancyModule` as a separate module, so a lib importing it would give the API a second, idle
 * copy of that state (found when two API processes stopped counting each other). Libs import
 * `CompanyProfilesModule` for what they need of companies.
 */
describe('modules with process state are built once', () => {
  it('no lib outside libs/tenancy imports TenancyModule', () => {
    const offenders = sources(join(ROOT, 'libs'))
      .filter((file) => !file.startsWith(join(ROOT, 'libs/tenancy/')))
      .filter((file) => /\bTenancyModule\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });

  it('the check sees the libs (it would find an import if there were one)', () => {
    const tenancyFiles = sources(join(ROOT, 'libs/tenancy'));
    expect(tenancyFiles.some((file) => /\bTenancyModule\b/.test(readFileSync(file, 'utf8')))).toBe(true);
  });
});
