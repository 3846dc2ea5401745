import { resolve } from 'node:path';
import { loadConfig, register } from 'tsconfig-paths';

// Jest runs globalSetup and globalTeardown outside its module mapper, so there `@ledgerkey/<lib>`
// would not resolve. Imported first by those files, this makes tsconfig.json's paths resolve in
// that process too: test support reaches every lib through its index, like all other code.
const tsconfig = loadConfig(resolve(__dirname, '../..'));
if (tsconfig.resultType !== 'success') throw new Error(`tsconfig.json: ${tsconfig.message}`);
register({ baseUrl: tsconfig.absoluteBaseUrl, paths: tsconfig.paths });
