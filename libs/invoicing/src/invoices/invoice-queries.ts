import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { InvoiceNotFoundError } from '../invoicing.errors';
import type { InvoiceListView, InvoiceView } from './invoice.view';
import { type InvoiceListFilter, InvoicesRepository } from './invoices.repository';

/** Read side of invoices, always within one company. */
@Injectable()
export class InvoiceQueries {
  constructor(private readonly invoices: InvoicesRepository) {}

  /** @throws InvoiceNotFoundError when the id is unknown in this company (also another company's id) */
  async get(companyId: string, invoiceId: string): Promise<InvoiceView> {
    const invoice = await this.invoices.findById(companyId, invoiceId);
    if (!invoice) throw new InvoiceNotFoundError(invoiceId);
    return invoice;
  }

  async list(companyId: string, page: PageRequest, filter?: InvoiceListFilter): Promise<InvoiceListView> {
    return { object: 'list', ...(await this.invoices.list(companyId, page, filter)) };
  }
}
