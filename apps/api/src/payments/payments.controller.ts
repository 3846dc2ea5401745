import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPropertyOptional,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { type ExternalEffect, Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  CREATE_PAYMENT_OPERATION,
  CreatePaymentDto,
  CreatePaymentHandler,
  PAYMENT_STATUSES,
  type PaymentListFilter,
  type PaymentStatus,
  PaymentListView,
  PaymentQueries,
  PaymentView,
} from '@ledgerkey/payments';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ListQueryDto, lowerCase } from '../list-query.dto';
import { ResourceIdPipe } from '../resource-id.pipe';

/** `GET /v1/payments`: pagination plus filters; every filter given narrows the list (AND). */
export class PaymentListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the payments of this invoice' })
  @IsOptional()
  @Transform(lowerCase)
  @IsUUID('all', { message: 'invoiceId must be an invoice id returned by this API' })
  invoiceId?: string;

  @ApiPropertyOptional({ enum: PAYMENT_STATUSES })
  @IsOptional()
  @IsIn(PAYMENT_STATUSES, { message: `status must be one of ${PAYMENT_STATUSES.join(', ')}` })
  status?: PaymentStatus;

  override filter(): PaymentListFilter {
    return { invoiceId: this.invoiceId, status: this.status };
  }
}

@ApiTags('Payments')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/payments')
export class PaymentsController {
  constructor(
    private readonly createPayment: CreatePaymentHandler,
    private readonly queries: PaymentQueries,
  ) {}

  @Post('create')
  @HttpCode(201)
  @Idempotent({ ...CREATE_PAYMENT_OPERATION, body: CreatePaymentDto, effect: 'external' })
  @ApiOperation({
    operationId: 'createPayment',
    summary: "Charge an invoice's outstanding amount through the payment provider",
    description:
      'Commits the payment (`processing`) with the Idempotency-Key before the provider is called, calls the ' +
      "provider outside any transaction with the payment's `providerReference` as the provider's own " +
      'idempotency key, then commits the outcome: `succeeded` (ledger entry debit provider clearing / credit ' +
      "receivables, the invoice's `paidTotal`, event `payment.succeeded`) or `failed` (a decline: " +
      '`failureCode`, event `payment.failed`). Both are final, stored under the key and replayed. While the ' +
      'outcome is unknown (provider timeout, 5xx, lost answer) the answer is `202` with the payment ' +
      '`processing`, `Location` and `Retry-After`, and nothing is stored: retry with the same key (it ' +
      'resumes the same payment: the provider is asked for the charge first, and charged again with the same ' +
      'reference only when it has none) or poll `Location`; the recovery worker resumes it meanwhile. Refusals ' +
      '(unknown invoice, amount above outstanding, fully credited invoice, currency mismatch) charge nothing ' +
      'and are stored and replayed like a success.',
  })
  @ApiCreatedResponse({ type: PaymentView, description: 'Final: `succeeded` or `failed` (stored, replayed)' })
  @ApiAcceptedResponse({
    type: PaymentView,
    description:
      'The outcome is not known yet: `status: processing`. Not stored: retry with the same Idempotency-Key ' +
      'after `Retry-After` seconds (it resumes this payment, never a second charge), or poll `Location`.',
    headers: {
      'Retry-After': { description: 'Seconds until a retry may know more', schema: { type: 'integer' } },
    },
  })
  @ApiNotFoundResponse({ description: '`not_found`: the invoice does not exist in your company' })
  @ApiConflictResponse({
    description: '`idempotency_key_in_use`: an attempt with this key is running (its lease still runs)',
  })
  @ApiUnprocessableEntityResponse({
    description:
      '`amount_exceeds_outstanding` (above gross − credited − paid − payments still processing, or nothing ' +
      'outstanding), `invoice_fully_credited`, `currency_mismatch` or `idempotency_key_reused`. Nothing is charged.',
  })
  @ApiServiceUnavailableResponse({
    description:
      '`payment_provider_unavailable` (no provider configured) or `service_unavailable`; nothing stored or charged',
  })
  create(
    @IdempotentBody() dto: CreatePaymentDto,
    @CurrentCompany() company: Company,
  ): ExternalEffect<unknown, unknown, PaymentView> {
    return this.createPayment.forRequest(company.id, dto);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getPayment', summary: 'Retrieve a payment' })
  @ApiOkResponse({ type: PaymentView })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  get(@Param('id', ResourceIdPipe) id: string, @CurrentCompany() company: Company): Promise<PaymentView> {
    return this.queries.get(company.id, id);
  }

  @Get()
  @ApiOperation({ operationId: 'listPayments', summary: 'List payments in the order they were created' })
  @ApiOkResponse({ type: PaymentListView })
  list(@Query() query: PaymentListQueryDto, @CurrentCompany() company: Company): Promise<PaymentListView> {
    return this.queries.list(company.id, query.page(), query.filter());
  }
}
