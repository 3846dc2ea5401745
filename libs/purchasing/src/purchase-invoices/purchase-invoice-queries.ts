import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { PurchaseInvoiceNotFoundError } from '../purchasing.errors';
import type { PurchaseInvoiceListView, PurchaseInvoiceView } from './purchase-invoice.view';
import { type PurchaseInvoiceListFilter, PurchaseInvoicesRepository } from './purchase-invoices.repository';

/** Read side of purchase invoices, always within one company. */
@Injectable()
export class PurchaseInvoiceQueries {
  constructor(private readonly purchaseInvoices: PurchaseInvoicesRepository) {}

  /** @throws PurchaseInvoiceNotFoundError when the id is unknown in this company (also another company's id) */
  async get(companyId: string, purchaseInvoiceId: string): Promise<PurchaseInvoiceView> {
    const invoice = await this.purchaseInvoices.findById(companyId, purchaseInvoiceId);
    if (!invoice) throw new PurchaseInvoiceNotFoundError(purchaseInvoiceId);
    return invoice;
  }

  async list(
    companyId: string,
    page: PageRequest,
    filter?: PurchaseInvoiceListFilter,
  ): Promise<PurchaseInvoiceListView> {
    return { object: 'list', ...(await this.purchaseInvoices.list(companyId, page, filter)) };
  }
}
