export type {
  BuyerDetails,
  SalesCreditNoteDocument,
  SalesDocument,
  SalesDocumentLine,
  SalesInvoiceDocument,
  SellerAddress,
  SellerDetails,
} from './sales-document';
export { EInvoiceNotRepresentableError } from './einvoicing.errors';
export type { EInvoiceProblem } from './einvoicing.errors';
export { PEPPOL_CUSTOMIZATION_ID, PEPPOL_PROFILE_ID, peppolDocumentOf } from './peppol-document';
export type { PeppolDocument } from './peppol-document';
export { EInvoicingModule } from './einvoicing.module';
export { SalesDocumentRenditions } from './sales-document-renditions';
export type { Rendition } from './sales-document-renditions';
