import { Controller, HttpCode, Param, Post, type StreamableFile, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { SalesDocumentRenditions } from '@ledgerkey/einvoicing';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  InvoiceListView,
  InvoiceQueries,
  InvoiceView,
  IssueInvoiceDto,
  IssueInvoiceHandler,
} from '@ledgerkey/invoicing';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ReadRoutes } from '../read-routes';
import { InvoiceListQueryDto } from './invoice-list-query.dto';
import { downloadOf, PdfRoute, UblRoute } from '../renditions';
import { ResourceIdPipe } from '../resource-id.pipe';

@ApiTags('Sales invoices')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/sales/invoices')
export class InvoicesController extends ReadRoutes({
  view: InvoiceView,
  listView: InvoiceListView,
  get: {
    operationId: 'getSalesInvoice',
    summary: 'Retrieve a sales invoice',
    notFound: "`not_found` (also for another company's id)",
  },
  list: {
    operationId: 'listSalesInvoices',
    summary: 'List sales invoices by series and number',
    query: InvoiceListQueryDto,
  },
}) {
  constructor(
    private readonly issueInvoice: IssueInvoiceHandler,
    protected override readonly queries: InvoiceQueries,
    private readonly renditions: SalesDocumentRenditions,
  ) {
    super();
  }

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    operation: 'sales.invoices.create',
    body: IssueInvoiceDto,
    status: 201,
    // The body's example orders `order-2001`: a domain key per order is the usual choice.
    keyExample: 'order-2001-invoice',
    location: (invoice: InvoiceView) => `/v1/sales/invoices/${invoice.id}`,
  })
  @ApiOperation({
    operationId: 'createSalesInvoice',
    summary: 'Issue a sales invoice',
    description:
      'Issues an immutable invoice with the next gapless number of its series and posts its ' +
      'journal entry. Retry with the same Idempotency-Key and body as often as needed: the ' +
      'first response is replayed (`Idempotent-Replayed: true`) and the books change once.',
  })
  @ApiCreatedResponse({ type: InvoiceView, description: 'Issued (or replayed)' })
  @ApiConflictResponse({
    description: '`order_already_invoiced` (with `existingInvoiceId`) or `idempotency_key_in_use`',
  })
  create(@IdempotentBody() dto: IssueInvoiceDto, @CurrentCompany() company: Company): Promise<InvoiceView> {
    return this.issueInvoice.execute(company, dto);
  }

  @UblRoute('getSalesInvoiceUbl', 'invoice')
  async ubl(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<StreamableFile> {
    return downloadOf(await this.renditions.invoiceUbl(company.id, id));
  }

  @PdfRoute('getSalesInvoicePdf', 'invoice')
  async pdf(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<StreamableFile> {
    return downloadOf(await this.renditions.invoicePdf(company.id, id));
  }
}
