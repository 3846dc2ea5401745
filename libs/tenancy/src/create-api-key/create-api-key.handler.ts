import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { apiKeyPrefix, type ApiKeyScope, generateApiKey, hashApiKey } from '../api-key';
import type { CreatedApiKeyView } from '../api-keys/api-key.view';
import { ApiKeysRepository } from '../api-keys/api-keys.repository';

export interface ApiKeyToCreate {
  name?: string | null;
  scope: ApiKeyScope;
}

@Injectable()
export class CreateApiKeyHandler {
  constructor(private readonly apiKeys: ApiKeysRepository) {}

  /**
   * Creates an API key of the company. Only its SHA-256 hash and first characters are stored;
   * the answer is the only place the key exists in clear (an idempotent route stores it sealed).
   */
  @Transactional()
  async execute(companyId: string, input: ApiKeyToCreate): Promise<CreatedApiKeyView> {
    const secret = generateApiKey();
    const key = await this.apiKeys.insert(companyId, {
      name: input.name ?? null,
      scope: input.scope,
      keyHash: hashApiKey(secret),
      keyPrefix: apiKeyPrefix(secret),
    });
    return { ...key, secret };
  }
}
