import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import type { ApiKeyView, CreatedApiKeyView } from '../api-keys/api-key.view';
import { ApiKeysRepository } from '../api-keys/api-keys.repository';
import { CreateApiKeyHandler } from '../create-api-key/create-api-key.handler';
import { ApiKeyNotFoundError } from '../tenancy.errors';

export interface RotatedApiKey {
  /** The replacement: same name and scope, a new secret. */
  created: CreatedApiKeyView;
  revoked: ApiKeyView;
}

@Injectable()
export class RotateApiKeyHandler {
  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly createApiKey: CreateApiKeyHandler,
  ) {}

  /**
   * Replaces an active key by a new one with the same name and scope, and revokes it, in one
   * transaction: the company is never without the key's successor (so even its last read_write
   * key can be rotated).
   * @throws ApiKeyNotFoundError when the id is unknown in this company, or the key is already revoked
   */
  @Transactional()
  async execute(companyId: string, apiKeyId: string): Promise<RotatedApiKey> {
    const key = await this.apiKeys.findById(companyId, apiKeyId);
    if (!key || key.revokedAt !== null) throw new ApiKeyNotFoundError(apiKeyId);
    const created = await this.createApiKey.execute(companyId, { name: key.name, scope: key.scope });
    const revoked = await this.apiKeys.revoke(companyId, apiKeyId);
    // A concurrent revocation won: the rotation rolls back rather than answer a key it did not revoke.
    if (!revoked) throw new ApiKeyNotFoundError(apiKeyId);
    return { created, revoked: revoked.key };
  }
}
