import { randomUUID } from 'node:crypto';
import {
  AllocationExceedsOutstandingError,
  InvoiceNotFoundError,
  InvoiceQueries,
  type InvoiceView,
  IssueCreditNoteDto,
  IssueCreditNoteHandler,
  IssueInvoiceDto,
  IssueInvoiceHandler,
  PayoutAlreadySettledError,
  RecordSettlementDto,
  RecordSettlementHandler,
  SettlementQueries,
  type SettlementView,
} from '@ledgerkey/invoicing';
import {
  outcomesOf,
  type TestTenant,
  useDocumentHandlers,
  validatedBody,
} from '../../../../test/support/document-handlers';
import { anInvoice } from '../../../../test/support/invoice.builder';
import { aSettlement, type SettlementBuilder } from '../../../../test/support/settlement.builder';

const tier = useDocumentHandlers();

/** An invoice of 10000 net at 21 %: gross 12100. */
function invoiceOf(company: TestTenant): Promise<InvoiceView> {
  const invoice = anInvoice().withLine({ quantity: '1', unitPrice: 10000, vatRate: '21' });
  return tier.get(IssueInvoiceHandler).execute(company, validatedBody(IssueInvoiceDto, invoice.build()));
}

function settle(company: TestTenant, settlement: SettlementBuilder): Promise<SettlementView> {
  return tier
    .get(RecordSettlementHandler)
    .execute(company, validatedBody(RecordSettlementDto, settlement.build()));
}

async function paidTotal(company: TestTenant, invoiceId: string): Promise<number> {
  return (await tier.get(InvoiceQueries).get(company.id, invoiceId)).paidTotal;
}

describe('RecordSettlementHandler', () => {
  it('pays invoices, posts bank and fees against receivables, and answers what GET answers', async () => {
    const company = await tier.newTenant();
    const [a, b] = [await invoiceOf(company), await invoiceOf(company)];
    const settlement = await settle(
      company,
      aSettlement()
        .allocating(b.id, 2100)
        .allocating(a.id, 12100)
        .withFee(150)
        .with({ paidAt: '2026-11-30T12:00:00+02:00' }),
    );

    expect(settlement).toMatchObject({
      allocatedTotal: 14200,
      feeAmount: 150,
      netAmount: 14050,
      paidAt: '2026-11-30T10:00:00.000Z',
    });
    expect(settlement.allocations.map((allocation) => allocation.invoiceId)).toEqual([a.id, b.id].sort());
    expect([await paidTotal(company, a.id), await paidTotal(company, b.id)]).toEqual([12100, 2100]);
    expect(await tier.journalOf(company.id, settlement.id)).toEqual([
      { account: 'bank', debit: 14050, credit: 0 },
      { account: 'payment_fees', debit: 150, credit: 0 },
      { account: 'accounts_receivable', debit: 0, credit: 14200 },
    ]);
    expect((await tier.eventsOf(company.id)).at(-1)).toEqual({
      type: 'settlement.created',
      object: settlement,
    });
    const stored = await tier.get(SettlementQueries).get(company.id, settlement.id);
    expect(JSON.stringify(stored)).toBe(JSON.stringify(settlement));
  });

  it('allocates at most what is outstanding: gross − credited − paid, in the same currency', async () => {
    const company = await tier.newTenant();
    const invoice = await invoiceOf(company);
    await tier.get(IssueCreditNoteHandler).execute(
      company.id,
      validatedBody(IssueCreditNoteDto, {
        invoiceId: invoice.id,
        reason: 'order_change',
        lines: [{ description: 'Discount', quantity: '1', unitPrice: 1000, vatRate: '21' }],
      }),
    );
    await settle(company, aSettlement().allocating(invoice.id, 5000));

    await expect(settle(company, aSettlement().allocating(invoice.id, 5891))).rejects.toBeInstanceOf(
      AllocationExceedsOutstandingError,
    );
    await expect(
      settle(company, aSettlement().allocating(invoice.id, 100).with({ currency: 'USD' })),
    ).rejects.toMatchObject({ code: 'allocation_exceeds_outstanding', invoiceId: invoice.id });
    await settle(company, aSettlement().allocating(invoice.id, 5890));
    expect(await paidTotal(company, invoice.id)).toBe(12100 - 1210);
  });

  it("reports an unknown or another company's invoice before any amount", async () => {
    const company = await tier.newTenant();
    const other = await tier.newTenant();
    const mine = await invoiceOf(company);
    const theirs = await invoiceOf(other);

    await expect(
      settle(company, aSettlement().allocating(mine.id, 999_999).allocating(theirs.id, 1)),
    ).rejects.toBeInstanceOf(InvoiceNotFoundError);
    await expect(settle(company, aSettlement().allocating(randomUUID(), 1))).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(await paidTotal(other, theirs.id)).toBe(0);
  });

  it('settles a payout once: concurrent and later twins name the first', async () => {
    const company = await tier.newTenant();
    const invoice = await invoiceOf(company);
    const payout = aSettlement().forPayout(`po_${randomUUID()}`).allocating(invoice.id, 1000);
    const { fulfilled, rejected } = await outcomesOf(
      Array.from({ length: 5 }, () => settle(company, payout)),
    );

    expect(fulfilled).toHaveLength(1);
    for (const error of rejected) {
      expect(error).toBeInstanceOf(PayoutAlreadySettledError);
      expect(error).toMatchObject({ existingSettlementId: fulfilled[0].id });
    }
    await expect(settle(company, payout)).rejects.toMatchObject({
      code: 'payout_already_settled',
      existingSettlementId: fulfilled[0].id,
    });
    expect(await paidTotal(company, invoice.id)).toBe(1000);
  });

  it('never lets concurrent payouts together exceed an invoice', async () => {
    const company = await tier.newTenant();
    const invoice = await invoiceOf(company);
    const { fulfilled, rejected } = await outcomesOf(
      Array.from({ length: 6 }, () => settle(company, aSettlement().allocating(invoice.id, 5000))),
    );

    expect(fulfilled).toHaveLength(2);
    expect(rejected).toHaveLength(4);
    for (const error of rejected) expect(error).toBeInstanceOf(AllocationExceedsOutstandingError);
    expect(await paidTotal(company, invoice.id)).toBe(10000);
  });

  describe('importPayout (a payout the provider reports)', () => {
    it('clears provider clearing, raises no paid total, and adds up several charges of one invoice', async () => {
      const company = await tier.newTenant();
      const [a, b] = [await invoiceOf(company), await invoiceOf(company)];
      const payoutId = `po_${randomUUID()}`;

      const settlement = await tier.get(RecordSettlementHandler).importPayout(company.id, {
        payoutId,
        currency: 'EUR',
        paidAt: '2026-12-01T10:00:00.000Z',
        feeAmount: 300,
        allocations: [
          { invoiceId: a.id, amount: 6000 },
          { invoiceId: b.id, amount: 12100 },
          { invoiceId: a.id, amount: 6100 },
        ],
      });

      expect(settlement).toMatchObject({ source: 'provider', allocatedTotal: 24200, netAmount: 23900 });
      expect(settlement.allocations.map((x) => [x.invoiceId, x.amount])).toEqual(
        [
          [a.id, 12100],
          [b.id, 12100],
        ].sort((x, y) => (x[0] < y[0] ? -1 : 1)),
      );
      expect([await paidTotal(company, a.id), await paidTotal(company, b.id)]).toEqual([0, 0]);
      expect(await tier.journalOf(company.id, settlement.id)).toEqual([
        { account: 'bank', debit: 23900, credit: 0 },
        { account: 'payment_fees', debit: 300, credit: 0 },
        { account: 'provider_clearing', debit: 0, credit: 24200 },
      ]);
    });

    it('shares the payout id with pushed settlements: whichever comes second is refused', async () => {
      const company = await tier.newTenant();
      const invoice = await invoiceOf(company);
      const pushed = await settle(
        company,
        aSettlement().allocating(invoice.id, 1000).with({ payoutId: 'po_shared' }),
      );

      const imported = tier.get(RecordSettlementHandler).importPayout(company.id, {
        payoutId: 'po_shared',
        currency: 'EUR',
        paidAt: '2026-12-01T10:00:00.000Z',
        feeAmount: 0,
        allocations: [{ invoiceId: invoice.id, amount: 1000 }],
      });

      await expect(imported).rejects.toBeInstanceOf(PayoutAlreadySettledError);
      await expect(imported).rejects.toMatchObject({ existingSettlementId: pushed.id });
      expect(pushed.source).toBe('api');
    });
  });
});
