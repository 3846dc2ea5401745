import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
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
import { DEFAULT_PAGE_SIZE, ListQueryDto } from '../list-query.dto';
import { ResourceIdPipe } from '../resource-id.pipe';

@ApiTags('Purchase invoices')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/purchases/invoices')
export class PurchaseInvoicesController {
  constructor(
    private readonly recordPurchaseInvoice: RecordPurchaseInvoiceHandler,
    private readonly queries: PurchaseInvoiceQueries,
  ) {}

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

  @Get(':id')
  @ApiOperation({ operationId: 'getPurchaseInvoice', summary: 'Retrieve a purchase invoice' })
  @ApiOkResponse({ type: PurchaseInvoiceView })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  get(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<PurchaseInvoiceView> {
    return this.queries.get(company.id, id);
  }

  @Get()
  @ApiOperation({
    operationId: 'listPurchaseInvoices',
    summary: 'List purchase invoices in the order they were recorded',
  })
  @ApiOkResponse({ type: PurchaseInvoiceListView })
  list(@Query() query: ListQueryDto, @CurrentCompany() company: Company): Promise<PurchaseInvoiceListView> {
    return this.queries.list(company.id, query.limit ?? DEFAULT_PAGE_SIZE, query.startingAfter);
  }
}
