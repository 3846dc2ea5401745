import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
// The same EN 16931 arithmetic as ledgerkey (pure functions): the comparison is about the
// idempotency and persistence path, not about VAT.
import { computeDocumentTotals } from '../../../../libs/money/src/vat';
import type { Company } from '../companies/company.entity';
import { OutboxEvent } from '../events/outbox-event.entity';
import { JournalEntry, JournalLine } from '../ledger/journal-entry.entity';
import type { CreateInvoiceDto } from './create-invoice.dto';
import { DocumentSequence } from './document-sequence.entity';
import { Invoice, InvoiceLine } from './invoice.entity';

export interface InvoiceResponse {
  id: string;
  number: string;
  series: string;
  sequence: number;
  currency: string;
  issueDate: string;
  dueDate: string | null;
  customer: Invoice['customer'];
  lines: Array<{
    position: number;
    description: string;
    quantity: string;
    unitPrice: number;
    vatRate: string;
    netAmount: number;
  }>;
  vatBreakdown: Invoice['vatBreakdown'];
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
  notes: string | null;
  createdAt: string;
}

@Injectable()
export class InvoicesService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Issues an invoice: gapless number, invoice and lines, balanced journal entry, event. */
  async create(company: Company, dto: CreateInvoiceDto): Promise<InvoiceResponse> {
    const totals = computeDocumentTotals(dto.lines);
    const series = dto.series ?? 'INV';
    const currency = dto.currency ?? company.currency;
    const postings = [
      { account: 'accounts_receivable', debit: totals.grossTotal, credit: 0 },
      { account: 'revenue', debit: 0, credit: totals.netTotal },
      { account: 'vat_payable', debit: 0, credit: totals.vatTotal },
    ];
    if (postings.reduce((sum, p) => sum + p.debit - p.credit, 0) !== 0) throw new Error('unbalanced entry');

    return this.dataSource.transaction(async (manager) => {
      const sequence = await this.nextNumber(manager, company.id, series);
      const invoice = await manager.save(
        manager.create(Invoice, {
          companyId: company.id,
          series,
          sequence,
          number: `${series}-${String(sequence).padStart(6, '0')}`,
          currency,
          issueDate: dto.issueDate ?? new Date().toISOString().slice(0, 10),
          dueDate: dto.dueDate ?? null,
          customer: { ...dto.customer },
          notes: dto.notes ?? null,
          vatBreakdown: totals.vatBreakdown,
          netTotal: totals.netTotal,
          vatTotal: totals.vatTotal,
          grossTotal: totals.grossTotal,
          lines: dto.lines.map((line, index) =>
            manager.create(InvoiceLine, {
              position: index + 1,
              description: line.description,
              quantity: line.quantity,
              unitPrice: line.unitPrice,
              vatRate: line.vatRate,
              netAmount: totals.lineNetAmounts[index],
            }),
          ),
        }),
      );
      await manager.save(
        manager.create(JournalEntry, {
          companyId: company.id,
          currency,
          sourceType: 'invoice',
          sourceId: invoice.id,
          memo: `Invoice ${invoice.number}`,
          lines: postings.map((posting) => manager.create(JournalLine, posting)),
        }),
      );
      const response = toResponse(invoice);
      await manager.save(
        manager.create(OutboxEvent, { companyId: company.id, type: 'invoice.created', payload: response }),
      );
      return response;
    });
  }

  /** The counter row is updated in the invoice's transaction: gapless, locked until commit. */
  private async nextNumber(manager: EntityManager, companyId: string, series: string): Promise<number> {
    const update = () =>
      manager
        .createQueryBuilder()
        .update(DocumentSequence)
        .set({ lastValue: () => 'last_value + 1' })
        .where('company_id = :companyId AND series = :series', { companyId, series })
        .returning('last_value')
        .execute();
    let result = await update();
    if (!result.affected) {
      await manager
        .createQueryBuilder()
        .insert()
        .into(DocumentSequence)
        .values({ companyId, series, lastValue: '0' })
        .orIgnore()
        .execute();
      result = await update();
    }
    return Number((result.raw as Array<{ last_value: string }>)[0].last_value);
  }
}

function toResponse(invoice: Invoice): InvoiceResponse {
  return {
    id: invoice.id,
    number: invoice.number,
    series: invoice.series,
    sequence: invoice.sequence,
    currency: invoice.currency,
    issueDate: invoice.issueDate,
    dueDate: invoice.dueDate,
    customer: invoice.customer,
    lines: invoice.lines.map((line) => ({
      position: line.position,
      description: line.description,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      vatRate: line.vatRate,
      netAmount: line.netAmount,
    })),
    vatBreakdown: invoice.vatBreakdown,
    netTotal: invoice.netTotal,
    vatTotal: invoice.vatTotal,
    grossTotal: invoice.grossTotal,
    notes: invoice.notes,
    createdAt: invoice.createdAt.toISOString(),
  };
}
