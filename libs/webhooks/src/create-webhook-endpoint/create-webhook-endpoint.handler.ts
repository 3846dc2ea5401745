import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { metadataOf, Transactional } from '@ledgerkey/database';
import { SecretBox } from '@ledgerkey/secrets';
import type { CreatedWebhookEndpointView } from '../endpoints/webhook-endpoint.view';
import { WebhookEndpointsRepository } from '../endpoints/webhook-endpoints.repository';
import { newWebhookSecret } from '../signing/webhook-signature';
import { assertAllowedUrl, ForbiddenTargetError } from '../target-guard/webhook-target';
import { WEBHOOK_OPTIONS, type WebhookOptions } from '../webhook-options';
import { WebhookUrlForbiddenError } from '../webhooks.errors';
import type { CreateWebhookEndpointDto } from './create-webhook-endpoint.dto';

@Injectable()
export class CreateWebhookEndpointHandler {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly secrets: SecretBox,
    @Inject(WEBHOOK_OPTIONS) private readonly options: WebhookOptions,
  ) {}

  /**
   * Registers an endpoint with a new signing secret, returned only here; it is stored sealed.
   * @throws WebhookUrlForbiddenError when the URL's host is a non-public address or names
   *   localhost (and private targets are not allowed); names are checked at delivery
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
    this.assertAllowedTarget(url);
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
   * What can be checked without DNS: the scheme, and hosts that are (or name) non-public
   * addresses. A name is not resolved here: registration answers the same for every name, so it
   * tells a tenant nothing about which names the network resolves, or to what. Every delivery
   * resolves the name and checks its addresses before connecting.
   */
  private assertAllowedTarget(url: URL): void {
    try {
      assertAllowedUrl(url, this.options.allowPrivateTargets);
    } catch (error) {
      if (error instanceof ForbiddenTargetError)
        throw new WebhookUrlForbiddenError(error.message, { cause: error });
      throw error;
    }
  }
}
