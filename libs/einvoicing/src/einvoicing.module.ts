import { Module } from '@nestjs/common';
import { InvoicingModule } from '@ledgerkey/invoicing';
import { SalesDocumentRenditions } from './sales-document-renditions';

@Module({
  imports: [InvoicingModule],
  providers: [SalesDocumentRenditions],
  exports: [SalesDocumentRenditions],
})
export class EInvoicingModule {}
