import { randomUUID } from 'node:crypto';
import {
  CreditExceedsInvoiceError,
  CreditNoteEmptyError,
  type CreditNoteView,
  InvoiceNotFoundError,
  InvoiceQueries,
  IssueCreditNoteDto,
  IssueCreditNoteHandler,
  IssueInvoiceDto,
  IssueInvoiceHandler,
} from '@ledgerkey/invoicing';
import {
  outcomesOf,
  type TestTenant,
  useDocumentHandlers,
  validatedBody,
} from '../../../../test/support/document-handlers';
import { anInvoice, type InvoiceBuilder, type LineInput } from '../../../../test/support/invoice.builder';

const tier = useDocumentHandlers();

function issueInvoice(company: TestTenant, invoice: InvoiceBuilder) {
  return tier.get(IssueInvoiceHandler).execute(company, validatedBody(IssueInvoiceDto, invoice.build()));
}

function credit(company: TestTenant, invoiceId: string, lines?: LineInput[]): Promise<CreditNoteView> {
  const body = { invoiceId, reason: 'order_change', ...(lines ? { lines } : {}) };
  return tier.get(IssueCreditNoteHandler).execute(company.id, validatedBody(IssueCreditNoteDto, body));
}

const line = (unitPrice: number, vatRate: string, quantity = '1'): LineInput => ({
  description: 'Returned',
  quantity,
  unitPrice,
  vatRate,
});

/** Net and VAT credited per rate over all credit notes of an invoice, from the stored rows. */
async function creditedByRate(invoiceId: string): Promise<Record<string, { net: number; vat: number }>> {
  const rows = await tier.query<{ vat_rate: string; net: number; vat: number }>(
    `SELECT b->>'vatRate' AS vat_rate, sum((b->>'netAmount')::bigint)::float8 AS net,
            sum((b->>'vatAmount')::bigint)::float8 AS vat
       FROM credit_notes c, jsonb_array_elements(c.vat_breakdown) AS b
      WHERE c.invoice_id = $1
      GROUP BY 1`,
    [invoiceId],
  );
  return Object.fromEntries(rows.map((row) => [row.vat_rate, { net: row.net, vat: row.vat }]));
}

describe('IssueCreditNoteHandler', () => {
  it('credits exactly the remainder per rate after partial credits: invoice and notes net to zero', async () => {
    const company = await tier.newTenant();
    // Three nets of 1 at 21 %: VAT on the sum is round(0.63) = 1; partial credits of 1 carry none.
    const invoice = await issueInvoice(
      company,
      anInvoice()
        .withLine({ quantity: '1', unitPrice: 1, vatRate: '21' })
        .withLine({ quantity: '1', unitPrice: 1, vatRate: '21' })
        .withLine({ quantity: '1', unitPrice: 1, vatRate: '21' })
        .withLine({ quantity: '1', unitPrice: 1000, vatRate: '9' }),
    );
    const first = await credit(company, invoice.id, [line(1, '21')]);
    const second = await credit(company, invoice.id, [line(1, '21'), line(400, '9')]);
    const rest = await credit(company, invoice.id);

    expect([first.vatTotal, second.vatTotal]).toEqual([0, 36]);
    expect(rest.vatBreakdown).toEqual([
      { vatRate: '21', netAmount: 1, vatAmount: 1 },
      { vatRate: '9', netAmount: 600, vatAmount: 54 },
    ]);
    expect(await creditedByRate(invoice.id)).toEqual({
      '21': { net: 3, vat: 1 },
      '9': { net: 1000, vat: 90 },
    });
    const stored = await tier.get(InvoiceQueries).get(company.id, invoice.id);
    expect(stored.creditedTotal).toBe(invoice.grossTotal);
    const receivables = [invoice, first, second, rest].map(async (document) =>
      (await tier.journalOf(company.id, document.id))
        .filter((posted) => posted.account === 'accounts_receivable')
        .reduce((sum, posted) => sum + posted.debit - posted.credit, 0),
    );
    expect((await Promise.all(receivables)).reduce((sum, amount) => sum + amount, 0)).toBe(0);
    await expect(credit(company, invoice.id)).rejects.toBeInstanceOf(CreditExceedsInvoiceError);
  });

  it('refuses a rate the invoice lacks, a net above what remains at a rate, and a credit of nothing', async () => {
    const company = await tier.newTenant();
    const invoice = await issueInvoice(company, anInvoice().withLine({ quantity: '1', unitPrice: 1000 }));
    await credit(company, invoice.id, [line(600, '21')]);

    await expect(credit(company, invoice.id, [line(100, '9')])).rejects.toThrow(/no lines at 9% VAT/);
    await expect(credit(company, invoice.id, [line(401, '21')])).rejects.toThrow(
      /exceeds the 400 not yet credited/,
    );
    await expect(credit(company, invoice.id, [line(0, '21')])).rejects.toBeInstanceOf(CreditNoteEmptyError);
    expect(await creditedByRate(invoice.id)).toEqual({ '21': { net: 600, vat: 126 } });
  });

  it('lets only as many concurrent partial credits through as the rate has room for', async () => {
    const company = await tier.newTenant();
    const invoice = await issueInvoice(company, anInvoice().withLine({ quantity: '1', unitPrice: 1000 }));
    const { fulfilled, rejected } = await outcomesOf(
      Array.from({ length: 8 }, () => credit(company, invoice.id, [line(300, '21')])),
    );

    expect(fulfilled).toHaveLength(3);
    expect(rejected).toHaveLength(5);
    for (const error of rejected) expect(error).toBeInstanceOf(CreditExceedsInvoiceError);
    expect(fulfilled.map((note) => note.sequence).sort((a, b) => a - b)).toEqual([1, 2, 3]);
    expect(fulfilled.map((note) => note.number).sort()).toEqual(['CN-000001', 'CN-000002', 'CN-000003']);
    expect(await creditedByRate(invoice.id)).toEqual({ '21': { net: 900, vat: 189 } });
  });

  it("does not credit another company's invoice, nor an unknown one", async () => {
    const owner = await tier.newTenant();
    const other = await tier.newTenant();
    const invoice = await issueInvoice(owner, anInvoice().withLine());

    await expect(credit(other, invoice.id)).rejects.toBeInstanceOf(InvoiceNotFoundError);
    await expect(credit(owner, randomUUID())).rejects.toMatchObject({ code: 'not_found' });
    expect(await creditedByRate(invoice.id)).toEqual({});
  });
});
