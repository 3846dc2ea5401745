import type { IdempotentRouteOptions } from '@ledgerkey/idempotency';
import { CreateApiKeyDto, type CreatedApiKeyView } from '@ledgerkey/tenancy';

/**
 * API key creation as an idempotent operation, shared by `POST /v1/api-keys/create` and the
 * operator CLI (`api-key:create`): one key scope (the company), one stored answer. The answer
 * holds the new key, so its stored body goes through the response sealer.
 */
export const CREATE_API_KEY_OPERATION: IdempotentRouteOptions<CreatedApiKeyView> = {
  operation: 'api-keys.create',
  body: CreateApiKeyDto,
  status: 201,
  location: (key) => `/v1/api-keys/${key.id}`,
  sensitiveResponse: true,
};
