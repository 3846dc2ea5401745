import { Module } from '@nestjs/common';
import { LedgerModule } from '@ledgerkey/ledger';
import { OutboxModule } from '@ledgerkey/outbox';
import { PurchaseInvoiceQueries } from './purchase-invoices/purchase-invoice-queries';
import { PurchaseInvoicesRepository } from './purchase-invoices/purchase-invoices.repository';
import { RecordPurchaseInvoiceHandler } from './record-purchase-invoice/record-purchase-invoice.handler';

@Module({
  imports: [LedgerModule, OutboxModule],
  providers: [PurchaseInvoicesRepository, RecordPurchaseInvoiceHandler, PurchaseInvoiceQueries],
  exports: [RecordPurchaseInvoiceHandler, PurchaseInvoiceQueries],
})
export class PurchasingModule {}
