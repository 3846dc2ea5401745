import { Body, Controller, Post, Req, UseGuards } from '@nestjs/common';
import { Idempotent } from '@node-idempotency/nestjs';
import { ApiKeyGuard, type AuthenticatedRequest } from '../companies/api-key.guard';
import { CreateInvoiceDto } from './create-invoice.dto';
import { type InvoiceResponse, InvoicesService } from './invoices.service';

@Controller('v1/sales/invoices')
@UseGuards(ApiKeyGuard)
export class InvoicesController {
  constructor(private readonly invoices: InvoicesService) {}

  /** Idempotent by the plugin: the answer is stored in Redis under the Idempotency-Key. */
  @Post('create')
  @Idempotent({ enforceIdempotency: true })
  create(@Req() request: AuthenticatedRequest, @Body() dto: CreateInvoiceDto): Promise<InvoiceResponse> {
    return this.invoices.create(request.company, dto);
  }
}
