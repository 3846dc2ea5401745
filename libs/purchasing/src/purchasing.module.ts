import { Module } from '@nestjs/common';
import { DocumentsModule } from '@ledgerkey/documents';
import { PurchaseInvoiceQueries } from './purchase-invoices/purchase-invoice-queries';
import { PurchaseInvoicesRepository } from './purchase-invoices/purchase-invoices.repository';
import { RecordPurchaseInvoiceHandler } from './record-purchase-invoice/record-purchase-invoice.handler';

@Module({
  imports: [DocumentsModule],
  providers: [PurchaseInvoicesRepository, RecordPurchaseInvoiceHandler, PurchaseInvoiceQueries],
  exports: [RecordPurchaseInvoiceHandler, PurchaseInvoiceQueries],
})
export class PurchasingModule {}
