import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { Inject, Injectable } from '@nestjs/common';
import { metadataOf, Transactional } from '@ledgerkey/database';
import { SecretBox } from '@ledgerkey/secrets';
import type { CreatedWebhookEndpointView } from '../endpoints/webhook-endpoint.view';
import { WebhookEndpointsRepository } from '../endpoints/webhook-endpoints.repository';
import { newWebhookSecret } from '../signing/webhook-signature';
import { nonPublicAddressKind } from '../target-guard/target-address';
import { assertAllowedUrl, ForbiddenTargetError, hostOf } from '../target-guard/webhook-target';
import { WEBHOOK_OPTIONS, type WebhookOptions } from '../webhook-options';
import { WebhookUrlForbiddenError } from '../webhooks.errors';
import type { CreateWebhookEndpointDto } from './create-webhook-endpoint.dto';

/** Registration waits this long for DNS at most; delivery checks again anyway. */
const REGISTRATION_DNS_TIMEOUT_MS = 3000;

@Injectable()
export class CreateWebhookEndpointHandler {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly secrets: SecretBox,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  /**
   * Registers an endpoint with a new signing secret, returned only here; it is stored sealed.
   * @throws WebhookUrlForbiddenError when the URL's host is, or resolves to, a non-public address
   *   (and private targets are not allowed)
   */
  @Transactional()
  async execute(
    companyId: string,
    dto: CreateWebhookEndpointDto,
    now = new Date(),
  ): Promise<CreatedWebhookEndpointView> {
    // Normalized once (host case, default port, path): what is checked is what is called, and
    // what is stored (the DTO validated that this form fits the column).
    const url = new URL(dto.url);
    await this.assertAllowedTarget(url);
    const secret = newWebhookSecret();
    const endpoint = await this.endpoints.insert(companyId, {
      id: randomUUID(),
      url: url.href,
      enabledEvents: dto.enabledEvents,
      // Sealed at rest: a database dump alone does not reveal it; delivery opens it to sign.
      sealedSecret: this.secrets.seal(secret),
      createdAt: now,
      metadata: metadataOf(dto.metadata),
    });
    return { ...endpoint, secret };
  }

  /**
   * Static checks, then the addresses the name resolves to now. A name that does not resolve
   * (yet) is accepted: every delivery resolves and checks again before connecting.
   */
  private async assertAllowedTarget(url: URL): Promise<void> {
    try {
      assertAllowedUrl(url, this.options.allowPrivateTargets);
    } catch (error) {
      if (error instanceof ForbiddenTargetError)
        throw new WebhookUrlForbiddenError(error.message, { cause: error });
      throw error;
    }
    if (this.options.allowPrivateTargets) return;
    const addresses = await resolveWithin(hostOf(url), REGISTRATION_DNS_TIMEOUT_MS);
    for (const address of addresses) {
      const kind = nonPublicAddressKind(address);
      if (kind !== null) throw new WebhookUrlForbiddenError(`url resolves to a ${kind} address`);
    }
  }
}

/** The host's addresses, or none when it does not resolve in time. */
async function resolveWithin(host: string, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), timeoutMs);
  });
  const resolved = lookup(host, { all: true, order: 'verbatim' }).then(
    (entries) => entries.map((entry) => entry.address),
    () => [],
  );
  try {
    return await Promise.race([resolved, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
