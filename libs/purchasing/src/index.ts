export { PurchasingModule } from './purchasing.module';
export { RecordPurchaseInvoiceHandler } from './record-purchase-invoice/record-purchase-invoice.handler';
export {
  RecordPurchaseInvoiceDto,
  SupplierDto,
  toRecordPurchaseInvoiceCommand,
} from './record-purchase-invoice/record-purchase-invoice.dto';
export type {
  PurchasingCompany,
  RecordPurchaseInvoiceCommand,
} from './record-purchase-invoice/record-purchase-invoice.dto';
export { PurchaseInvoiceQueries } from './purchase-invoices/purchase-invoice-queries';
export { PurchaseInvoiceView, PurchaseInvoiceListView } from './purchase-invoices/purchase-invoice.view';
export { PurchaseInvoiceDuplicateError, PurchaseInvoiceNotFoundError } from './purchasing.errors';
export {
  normalizeDocumentNumber,
  normalizeSupplierName,
  normalizeVatId,
  supplierKeyOf,
} from './supplier-key';
