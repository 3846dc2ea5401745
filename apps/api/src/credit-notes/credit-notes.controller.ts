import { Controller, HttpCode, Param, Post, type StreamableFile, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { SalesDocumentRenditions } from '@ledgerkey/einvoicing';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  CreditNoteListView,
  CreditNoteQueries,
  CreditNoteView,
  IssueCreditNoteDto,
  IssueCreditNoteHandler,
} from '@ledgerkey/invoicing';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ReadRoutes } from '../read-routes';
import { CreditNoteListQueryDto } from './credit-note-list-query.dto';
import { downloadOf, PdfRoute, UblRoute } from '../renditions';
import { ResourceIdPipe } from '../resource-id.pipe';

@ApiTags('Credit notes')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/sales/credit-notes')
export class CreditNotesController extends ReadRoutes({
  view: CreditNoteView,
  listView: CreditNoteListView,
  get: { operationId: 'getCreditNote', summary: 'Retrieve a credit note', notFound: '`not_found`' },
  list: {
    operationId: 'listCreditNotes',
    summary: 'List credit notes by number',
    query: CreditNoteListQueryDto,
  },
}) {
  constructor(
    private readonly issueCreditNote: IssueCreditNoteHandler,
    protected override readonly queries: CreditNoteQueries,
    private readonly renditions: SalesDocumentRenditions,
  ) {
    super();
  }

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    operation: 'sales.credit-notes.create',
    body: IssueCreditNoteDto,
    status: 201,
    location: (note: CreditNoteView) => `/v1/sales/credit-notes/${note.id}`,
  })
  @ApiOperation({
    operationId: 'createCreditNote',
    summary: 'Credit an invoice',
    description:
      'Issues an immutable credit note (own gapless series CN, reserved for credit notes) ' +
      'against an invoice and posts the reversing journal entry. Without lines, credits ' +
      'everything not yet credited. Per VAT rate, the credited net never exceeds the invoice, ' +
      'also under concurrent requests.',
  })
  @ApiCreatedResponse({ type: CreditNoteView, description: 'Issued (or replayed)' })
  @ApiNotFoundResponse({ description: '`not_found`: no such invoice in your company (stored under the key)' })
  @ApiUnprocessableEntityResponse({
    description:
      '`credit_exceeds_invoice`, `credit_note_empty` (stored under the key) or `idempotency_key_reused`',
  })
  create(
    @IdempotentBody() dto: IssueCreditNoteDto,
    @CurrentCompany() company: Company,
  ): Promise<CreditNoteView> {
    return this.issueCreditNote.execute(company.id, dto);
  }

  @UblRoute('getCreditNoteUbl', 'credit note')
  async ubl(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<StreamableFile> {
    return downloadOf(await this.renditions.creditNoteUbl(company.id, id));
  }

  @PdfRoute('getCreditNotePdf', 'credit note')
  async pdf(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<StreamableFile> {
    return downloadOf(await this.renditions.creditNotePdf(company.id, id));
  }
}
