import { Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  PurchaseInvoiceListView,
  PurchaseInvoiceQueries,
  PurchaseInvoiceView,
  RecordPurchaseInvoiceDto,
  RecordPurchaseInvoiceHandler,
} from '@ledgerkey/purchasing';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ReadRoutes } from '../read-routes';
import { PurchaseInvoiceListQueryDto } from './purchase-invoice-list-query.dto';

@ApiTags('Purchase invoices')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/purchases/invoices')
export class PurchaseInvoicesController extends ReadRoutes({
  view: PurchaseInvoiceView,
  listView: PurchaseInvoiceListView,
  get: {
    operationId: 'getPurchaseInvoice',
    summary: 'Retrieve a purchase invoice',
    notFound: "`not_found` (also for another company's id)",
  },
  list: {
    operationId: 'listPurchaseInvoices',
    summary: 'List purchase invoices in the order they were recorded',
    query: PurchaseInvoiceListQueryDto,
  },
}) {
  constructor(
    private readonly recordPurchaseInvoice: RecordPurchaseInvoiceHandler,
    protected override readonly queries: PurchaseInvoiceQueries,
  ) {
    super();
  }

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    operation: 'purchases.invoices.create',
    body: RecordPurchaseInvoiceDto,
    status: 201,
    location: (invoice: PurchaseInvoiceView) => `/v1/purchases/invoices/${invoice.id}`,
  })
  @ApiOperation({
    operationId: 'createPurchaseInvoice',
    summary: "Record a supplier's invoice",
    description:
      'Records an immutable purchase invoice and posts its journal entry (expense and VAT ' +
      'receivable against payables). Retry with the same Idempotency-Key and body as often as ' +
      'needed: the first response is replayed (`Idempotent-Replayed: true`). Independently of ' +
      'keys and their expiry, a supplier document is recorded once: a second upload answers 409 ' +
      '`purchase_invoice_duplicate` naming the first. Same document: the normalized ' +
      '`documentNumber` matches and either both VAT ids are equal, or at least one side has no ' +
      'VAT id and the normalized supplier names are equal (the database enforces it too, also ' +
      'for concurrent uploads). Different VAT ids are different suppliers.',
  })
  @ApiCreatedResponse({ type: PurchaseInvoiceView, description: 'Recorded (or replayed)' })
  @ApiConflictResponse({
    description:
      '`purchase_invoice_duplicate` (with `existingPurchaseInvoiceId`) or `idempotency_key_in_use`',
  })
  create(
    @IdempotentBody() dto: RecordPurchaseInvoiceDto,
    @CurrentCompany() company: Company,
  ): Promise<PurchaseInvoiceView> {
    return this.recordPurchaseInvoice.execute(company, dto);
  }
}
