import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { isSealed, SealedValueUnreadableError, SecretBox } from '@ledgerkey/secrets';
import { WebhookEndpointsRepository } from '../endpoints/webhook-endpoints.repository';
import { isPlaintextSecret } from '../signing/stored-secret';

/** What one pass did. */
export interface SealStoredSecretsResult {
  /** Legacy `whsec_…` secrets, now sealed under the current key. */
  sealed: number;
  /** Secrets sealed under SECRETS_KEY_PREVIOUS, now sealed under the current key. */
  resealed: number;
  /** Secrets sealed under a key this process does not have (left as they are). */
  unreadable: number;
}

/** Rows per transaction: keeps row locks short. */
const BATCH = 200;

@Injectable()
export class SealStoredSecretsHandler {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * Brings every stored webhook secret under the current key: seals legacy plaintext secrets
   * (endpoints registered before secrets were sealed) and re-seals those sealed under the
   * previous key (after a rotation), so SECRETS_KEY_PREVIOUS can be dropped. Idempotent; safe
   * while other processes run the same pass (each row is taken by one of them) or serve
   * requests. SQL migrations cannot do this: they do not have the key.
   */
  async execute(): Promise<SealStoredSecretsResult> {
    const result: SealStoredSecretsResult = { sealed: 0, resealed: 0, unreadable: 0 };
    let afterSeq = '0';
    for (;;) {
      const last = await this.sealBatch(afterSeq, result);
      if (last === null) return result;
      afterSeq = last;
    }
  }

  /** @returns the last seq of the batch, or null when there was nothing left */
  @Transactional()
  private async sealBatch(afterSeq: string, result: SealStoredSecretsResult): Promise<string | null> {
    const rows = await this.endpoints.lockSecretsNotStartingWith(
      this.secrets.currentKeyPrefix,
      afterSeq,
      BATCH,
    );
    if (rows.length === 0) return null;
    const replaced: Array<{ companyId: string; id: string; storedSecret: string }> = [];
    for (const row of rows) {
      if (isPlaintextSecret(row.secret)) {
        replaced.push({ companyId: row.companyId, id: row.id, storedSecret: this.secrets.seal(row.secret) });
        result.sealed += 1;
      } else if (isSealed(row.secret)) {
        try {
          replaced.push({
            companyId: row.companyId,
            id: row.id,
            storedSecret: this.secrets.seal(this.secrets.open(row.secret)),
          });
          result.resealed += 1;
        } catch (error) {
          if (!(error instanceof SealedValueUnreadableError)) throw error;
          result.unreadable += 1;
        }
      }
    }
    await this.endpoints.replaceSecrets(replaced);
    return rows[rows.length - 1].seq;
  }
}
