import { Logger } from '@nestjs/common';
import { isSealed, SealedValueUnreadableError, type Sealer, type SecretBox } from '@ledgerkey/secrets';

/**
 * A replay whose stored answer was sealed under a key this server no longer has (SECRETS_KEY
 * lost or replaced without SECRETS_KEY_PREVIOUS). The first request ran and its effect stands;
 * only its answer — which held a secret — cannot be given again. `410`, not `5xx`: retrying
 * cannot help.
 */
export class ReplayUnavailableError extends Error {
  readonly code = 'idempotency_replay_unavailable';
  constructor(options?: { cause?: unknown }) {
    super(
      'The request with this Idempotency-Key completed, but its stored answer contained a secret ' +
        'that this server can no longer decrypt, so it cannot be replayed. What the request created ' +
        'exists; list it to find it, and replace it to get a new secret.',
      options,
    );
  }
}

const logger = new Logger('IdempotentReplay');

/**
 * The idempotency layer's sealer for stored answers of routes that return a secret (the webhook
 * endpoint create): bodies are sealed with the SecretBox before they are stored.
 * - A stored body that is not sealed is a record written before answers were sealed: replayed
 *   as stored (deliberately: it is JSON, never in the sealed format) until its key expires.
 * - A sealed body this server cannot open answers `410 idempotency_replay_unavailable`.
 */
export function replayBodySealer(box: SecretBox): Sealer {
  return {
    seal: (body) => box.seal(body),
    open: (stored) => {
      if (!isSealed(stored)) return stored;
      try {
        return box.open(stored);
      } catch (error) {
        if (!(error instanceof SealedValueUnreadableError)) throw error;
        logger.warn(`a stored answer cannot be replayed: ${error.message}`);
        throw new ReplayUnavailableError({ cause: error });
      }
    },
  };
}
