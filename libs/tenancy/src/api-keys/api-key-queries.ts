import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { ApiKeyNotFoundError } from '../tenancy.errors';
import type { ApiKeyListView, ApiKeyView } from './api-key.view';
import { ApiKeysRepository } from './api-keys.repository';

/** Read side of API keys, always within one company. Never shows a secret. */
@Injectable()
export class ApiKeyQueries {
  constructor(private readonly apiKeys: ApiKeysRepository) {}

  /** @throws ApiKeyNotFoundError when the id is unknown in this company */
  async get(companyId: string, apiKeyId: string): Promise<ApiKeyView> {
    const key = await this.apiKeys.findById(companyId, apiKeyId);
    if (!key) throw new ApiKeyNotFoundError(apiKeyId);
    return key;
  }

  /** Every key of the company, revoked ones too, in creation order (`page.order`). */
  async list(companyId: string, page: PageRequest): Promise<ApiKeyListView> {
    return { object: 'list', ...(await this.apiKeys.list(companyId, page)) };
  }
}
