import { randomUUID } from 'node:crypto';
import { DueDateBeforeIssueDateError } from '@ledgerkey/documents';
import {
  InvoiceQueries,
  type InvoiceView,
  IssueInvoiceDto,
  IssueInvoiceHandler,
  OrderAlreadyInvoicedError,
} from '@ledgerkey/invoicing';
import {
  outcomesOf,
  type TestTenant,
  useDocumentHandlers,
  validatedBody,
} from '../../../../test/support/document-handlers';
import { anInvoice, type InvoiceBuilder } from '../../../../test/support/invoice.builder';
import { formatDocumentNumber } from '../numbering/document-number';

const tier = useDocumentHandlers();

function issue(company: TestTenant, invoice: InvoiceBuilder, now?: Date): Promise<InvoiceView> {
  return tier.get(IssueInvoiceHandler).execute(company, validatedBody(IssueInvoiceDto, invoice.build()), now);
}

async function lastValue(companyId: string, series: string): Promise<number | null> {
  const rows = await tier.query<{ last_value: string }>(
    `SELECT last_value FROM document_sequences
      WHERE company_id = $1 AND document_type = 'invoice' AND series = $2`,
    [companyId, series],
  );
  return rows[0] ? Number(rows[0].last_value) : null;
}

describe('IssueInvoiceHandler', () => {
  it('numbers 20 concurrent invoices of a series 1 to 20, without gaps or repeats', async () => {
    const company = await tier.newTenant();
    const invoices = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        issue(
          company,
          anInvoice()
            .with({ series: 'B2B' })
            .withLine({ unitPrice: 100 + index }),
        ),
      ),
    );

    expect(invoices.map((invoice) => invoice.sequence).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
    expect(invoices.find((invoice) => invoice.sequence === 7)?.number).toBe('B2B-000007');
    expect(await lastValue(company.id, 'B2B')).toBe(20);
    // Another series has its own counter.
    expect((await issue(company, anInvoice().withLine())).number).toBe('INV-000001');
  });

  it('numbers in SQL as formatDocumentNumber does: six digits at least, every digit past them kept', async () => {
    const company = await tier.newTenant();
    await tier.query(
      `INSERT INTO document_sequences (company_id, document_type, series, last_value)
       VALUES ($1, 'invoice', 'BIG', 999998)`,
      [company.id],
    );
    const numbers = [];
    for (let i = 0; i < 2; i++)
      numbers.push((await issue(company, anInvoice().with({ series: 'BIG' }).withLine())).number);

    expect(numbers).toEqual([formatDocumentNumber('BIG', 999999), formatDocumentNumber('BIG', 1000000)]);
    expect(numbers).toEqual(['BIG-999999', 'BIG-1000000']);
    expect(await lastValue(company.id, 'BIG')).toBe(1000000);
  });

  it('lets one of five concurrent invoices of an order win; the others name it and leave no gap', async () => {
    const company = await tier.newTenant();
    const orderId = `order-${randomUUID()}`;
    const { fulfilled, rejected } = await outcomesOf(
      Array.from({ length: 5 }, () => issue(company, anInvoice().withOrderId(orderId).withLine())),
    );

    expect(fulfilled).toHaveLength(1);
    const [winner] = fulfilled;
    expect(rejected).toHaveLength(4);
    for (const error of rejected) {
      expect(error).toBeInstanceOf(OrderAlreadyInvoicedError);
      expect(error).toMatchObject({
        code: 'order_already_invoiced',
        orderId,
        existingInvoiceId: winner.id,
      });
    }
    // Losers that took a number after the winner committed rolled it back with everything else.
    expect(await lastValue(company.id, 'INV')).toBe(1);
    expect((await issue(company, anInvoice().withLine())).sequence).toBe(2);
  });

  it('answers a later invoice of the same order with the first one, before taking a number', async () => {
    const company = await tier.newTenant();
    const orderId = `order-${randomUUID()}`;
    const first = await issue(company, anInvoice().withOrderId(orderId).withLine());

    await expect(issue(company, anInvoice().withOrderId(orderId).withLine())).rejects.toMatchObject({
      code: 'order_already_invoiced',
      existingInvoiceId: first.id,
    });
    expect(await lastValue(company.id, 'INV')).toBe(1);
  });

  it('posts one balanced entry, appends one event, and answers what GET answers', async () => {
    const company = await tier.newTenant();
    const invoice = await issue(
      company,
      anInvoice()
        .withLine({ quantity: '2.50', unitPrice: 1001, vatRate: '21.00' })
        .withLine({ quantity: '1', unitPrice: 3000, vatRate: '9' }),
    );

    expect(invoice).toMatchObject({
      lines: [
        { position: 1, quantity: '2.5', vatRate: '21', netAmount: 2503 },
        { position: 2, quantity: '1', vatRate: '9', netAmount: 3000 },
      ],
      vatBreakdown: [
        { vatRate: '21', netAmount: 2503, vatAmount: 526 },
        { vatRate: '9', netAmount: 3000, vatAmount: 270 },
      ],
      netTotal: 5503,
      vatTotal: 796,
      grossTotal: 6299,
    });
    expect(await tier.journalOf(company.id, invoice.id)).toEqual([
      { account: 'accounts_receivable', debit: 6299, credit: 0 },
      { account: 'revenue', debit: 0, credit: 5503 },
      { account: 'vat_payable', debit: 0, credit: 796 },
    ]);
    expect(await tier.eventsOf(company.id)).toEqual([{ type: 'invoice.created', object: invoice }]);
    // Member for member and in the same order: replays and GETs are byte-identical.
    const stored = await tier.get(InvoiceQueries).get(company.id, invoice.id);
    expect(JSON.stringify(stored)).toBe(JSON.stringify(invoice));
  });

  it('posts nothing for an invoice worth nothing, and still announces it', async () => {
    const company = await tier.newTenant();
    const invoice = await issue(company, anInvoice().withLine({ unitPrice: 0 }));

    expect(invoice.grossTotal).toBe(0);
    expect(await tier.journalOf(company.id, invoice.id)).toEqual([]);
    expect(await tier.eventsOf(company.id)).toHaveLength(1);
  });

  it('refuses a due date before the defaulted issue date without taking a number', async () => {
    const company = await tier.newTenant();
    const now = new Date('2026-11-30T12:00:00Z');

    await expect(
      issue(company, anInvoice().with({ dueDate: '2026-11-29' }).withLine(), now),
    ).rejects.toBeInstanceOf(DueDateBeforeIssueDateError);
    expect(await lastValue(company.id, 'INV')).toBeNull();
    expect(
      (await issue(company, anInvoice().with({ dueDate: '2026-11-30' }).withLine(), now)).issueDate,
    ).toBe('2026-11-30');
  });
});
