// `npm run sdk:generate` (also run by `npm run openapi`): the low-level client in src/generated,
// generated from the committed docs/openapi.json. Paths are relative to the repository root.
import { defineConfig } from '@hey-api/openapi-ts';

export default defineConfig({
  input: './docs/openapi.json',
  // The drift test generates into a temporary folder (LEDGERKEY_SDK_GENERATED_OUT) to compare.
  output: { path: process.env.LEDGERKEY_SDK_GENERATED_OUT ?? './libs/sdk/src/generated', clean: true },
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
});
