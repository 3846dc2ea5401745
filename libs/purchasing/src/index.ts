export { PurchasingModule } from './purchasing.module';
export { RecordPurchaseInvoiceHandler } from './record-purchase-invoice/record-purchase-invoice.handler';
export { RecordPurchaseInvoiceDto } from './record-purchase-invoice/record-purchase-invoice.dto';
export { PurchaseInvoiceQueries } from './purchase-invoices/purchase-invoice-queries';
export { PurchaseInvoiceListView, PurchaseInvoiceView } from './purchase-invoices/purchase-invoice.view';
export type { PurchaseInvoiceListFilter } from './purchase-invoices/purchase-invoices.repository';
export { PurchaseInvoiceDuplicateError, PurchaseInvoiceNotFoundError } from './purchasing.errors';
export { normalizeSupplierName } from './supplier-key';
