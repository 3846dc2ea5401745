import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import type { ApiKeyView } from '../api-keys/api-key.view';
import { ApiKeysRepository } from '../api-keys/api-keys.repository';
import { VerifiedApiKeys } from '../revocations/verified-api-keys';
import { ApiKeyNotFoundError, LastReadWriteKeyError } from '../tenancy.errors';

@Injectable()
export class RevokeApiKeyHandler {
  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly verified: VerifiedApiKeys,
  ) {}

  /**
   * Revokes an API key. Idempotent: revoking a revoked key answers it as it is. This process
   * forgets the key at once (the caller's next request is refused); every other API process when
   * it hears the revocation's NOTIFY, and within 5 s in any case (see `VerifiedApiKeys`).
   * @throws ApiKeyNotFoundError when the id is unknown in this company
   * @throws LastReadWriteKeyError for the company's last active read_write key
   */
  @Transactional()
  async execute(companyId: string, apiKeyId: string): Promise<ApiKeyView> {
    const key = await this.get(companyId, apiKeyId);
    if (key.revokedAt !== null) return key;
    if (key.scope === 'read_write') {
      const active = await this.apiKeys.lockActiveReadWriteKeys(companyId);
      if (active.length === 1 && active[0] === apiKeyId) throw new LastReadWriteKeyError(apiKeyId);
    }
    const revoked = await this.apiKeys.revoke(companyId, apiKeyId);
    // null: revoked meanwhile by a concurrent call, whose revocation stands.
    if (!revoked) return this.get(companyId, apiKeyId);
    // Before the commit: a lookup between here and the commit may cache the key again, and the
    // NOTIFY sent at commit evicts it then.
    this.verified.forget(revoked.keyHash.toString('hex'));
    return revoked.key;
  }

  private async get(companyId: string, apiKeyId: string): Promise<ApiKeyView> {
    const key = await this.apiKeys.findById(companyId, apiKeyId);
    if (!key) throw new ApiKeyNotFoundError(apiKeyId);
    return key;
  }
}
