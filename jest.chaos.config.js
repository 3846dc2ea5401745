/**
 * The chaos suite (`npm run test:chaos`), kept out of `npm test`: API and worker processes are
 * SIGKILLed and PostgreSQL is restarted under load. It runs its own embedded PostgreSQL (no
 * global setup, DATABASE_URL is ignored) and needs a current build, which the npm script makes.
 */
const { projects } = require('./jest.config.js');

const e2e = projects.find((project) => project.displayName === 'e2e');

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 240000,
  projects: [
    {
      displayName: 'chaos',
      testEnvironment: 'node',
      rootDir: __dirname,
      roots: ['<rootDir>/test'],
      testRegex: '\\.chaos-spec\\.ts$',
      moduleFileExtensions: ['ts', 'js', 'json'],
      moduleNameMapper: e2e.moduleNameMapper,
      transform: e2e.transform,
    },
  ],
};
