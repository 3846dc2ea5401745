import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  CreditNoteListView,
  CreditNoteQueries,
  CreditNoteView,
  IssueCreditNoteDto,
  IssueCreditNoteHandler,
} from '@ledgerkey/invoicing';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { DEFAULT_PAGE_SIZE, ListQueryDto } from '../list-query.dto';
import { ResourceIdPipe } from '../resource-id.pipe';

@ApiTags('Credit notes')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/sales/credit-notes')
export class CreditNotesController {
  constructor(
    private readonly issueCreditNote: IssueCreditNoteHandler,
    private readonly queries: CreditNoteQueries,
  ) {}

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

  @Get(':id')
  @ApiOperation({ operationId: 'getCreditNote', summary: 'Retrieve a credit note' })
  @ApiOkResponse({ type: CreditNoteView })
  @ApiNotFoundResponse({ description: '`not_found`' })
  get(@Param('id', ResourceIdPipe) id: string, @CurrentCompany() company: Company): Promise<CreditNoteView> {
    return this.queries.get(company.id, id);
  }

  @Get()
  @ApiOperation({ operationId: 'listCreditNotes', summary: 'List credit notes by number' })
  @ApiOkResponse({ type: CreditNoteListView })
  list(@Query() query: ListQueryDto, @CurrentCompany() company: Company): Promise<CreditNoteListView> {
    return this.queries.list(company.id, query.limit ?? DEFAULT_PAGE_SIZE, query.startingAfter);
  }
}
