import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import {
  ProviderEventInvalidError,
  type ProviderEventReceipt,
  ProviderUnknownError,
  ReceiveProviderEventHandler,
} from '@ledgerkey/payments';
import type { Request } from 'express';
import { ApiOperatorOnly, ApiPublic } from '../openapi-audience';

export class ProviderEventReceiptView {
  @ApiProperty({ description: 'True when the event was recorded before: nothing was applied now' })
  duplicate: boolean;
  @ApiProperty({
    enum: ['applied', 'duplicate', 'parked', 'ignored'],
    description:
      '`applied`: recorded with its effect; `duplicate`: recorded before; `parked`: recorded, applied by the ' +
      'worker once it can be (e.g. a payout before its charges succeeded here); `ignored`: nothing to apply ' +
      '(a charge of no payment here, or one that disagrees with a final payment: reconciliation reports it)',
  })
  result: ProviderEventReceipt['result'];
  @ApiPropertyOptional({ description: 'Why it was parked or ignored' }) reason?: string;
}

/** `{provider}`: lower-case letters, digits and `_` (e.g. `sandbox`). */
const PROVIDER_NAME = /^[a-z0-9_]{1,50}$/;

// Called by the provider, not by a customer: in the operator document, with no API key
// (`security: []`; the Standard Webhooks signature authenticates it).
@ApiOperatorOnly()
@ApiPublic()
@ApiTags('Payment provider')
@Controller('v1/providers')
export class ProviderEventsController {
  constructor(private readonly receiver: ReceiveProviderEventHandler) {}

  @Post(':provider/events')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'receiveProviderEvent',
    summary: "The payment provider's webhooks (no API key: the provider's signature)",
    description:
      'Verifies the Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with ' +
      'PAYMENT_PROVIDER_WEBHOOK_SECRET over the exact body; a timestamp more than five minutes off is refused. ' +
      'Each event is recorded by (provider, event id) in the transaction that applies it, so a repeat answers ' +
      '`{"duplicate": true}` and applies nothing. `charge.succeeded` / `charge.failed` complete a processing ' +
      "payment through the payment's own outcome path; `charge.refunded` books the charge's refunds (reverse " +
      'posting, paidTotal lowered, `payment.refunded`); `payout.paid` becomes a settlement through the use case ' +
      'of POST /v1/settlements/create (`payoutId` the business key). Events arriving before what they depend on ' +
      'are parked and applied by the worker (docs/idempotency.md, "Inbound").',
  })
  @ApiParam({ name: 'provider', example: 'sandbox', description: 'The configured provider' })
  @ApiHeader({ name: 'webhook-id', required: true, description: 'The event id' })
  @ApiHeader({ name: 'webhook-timestamp', required: true, description: 'Unix seconds of this attempt' })
  @ApiHeader({ name: 'webhook-signature', required: true, description: '`v1,<base64 HMAC-SHA256>`' })
  @ApiOkResponse({ type: ProviderEventReceiptView })
  @ApiBadRequestResponse({ description: '`provider_event_invalid` or `malformed_json`: nothing recorded' })
  @ApiUnauthorizedResponse({
    description:
      '`provider_signature_invalid`: missing or wrong signature, or stale timestamp; nothing recorded',
  })
  @ApiNotFoundResponse({ description: '`not_found`: no such provider configured' })
  @ApiUnprocessableEntityResponse({
    description:
      '`provider_event_type_unknown`: signed and well formed, of a type not handled; nothing recorded (the ' +
      'provider keeps redelivering it)',
  })
  @ApiServiceUnavailableResponse({
    description: '`payment_provider_unavailable`: no webhook secret configured',
  })
  receive(@Param('provider') provider: string, @Req() request: Request): Promise<ProviderEventReceipt> {
    const rawBody = (request as Request & { rawBody?: Buffer }).rawBody;
    if (!PROVIDER_NAME.test(provider)) return Promise.reject(new ProviderUnknownError(provider));
    if (rawBody === undefined) {
      return Promise.reject(new ProviderEventInvalidError('send the event as application/json'));
    }
    return this.receiver.receive(provider, rawBody, request.headers);
  }
}
