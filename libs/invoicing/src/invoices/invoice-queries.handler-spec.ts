import { randomUUID } from 'node:crypto';
import type { PageRequest } from '@ledgerkey/database';
import {
  INVOICE_CREDIT_STATUSES,
  INVOICE_PAYMENT_STATUSES,
  InvoiceNotFoundError,
  InvoiceQueries,
  type InvoiceView,
  invoiceStatusOf,
  IssueCreditNoteDto,
  IssueCreditNoteHandler,
  IssueInvoiceDto,
  IssueInvoiceHandler,
  RecordSettlementDto,
  RecordSettlementHandler,
} from '@ledgerkey/invoicing';
import {
  type TestTenant,
  useDocumentHandlers,
  validatedBody,
} from '../../../../test/support/document-handlers';
import { anInvoice, type InvoiceBuilder } from '../../../../test/support/invoice.builder';
import { aSettlement } from '../../../../test/support/settlement.builder';

const tier = useDocumentHandlers();

function issue(
  company: TestTenant,
  series: string,
  build = (invoice: InvoiceBuilder) => invoice,
): Promise<InvoiceView> {
  const invoice = build(
    anInvoice().with({ series }).withLine({ quantity: '1', unitPrice: 10000, vatRate: '21' }),
  );
  return tier.get(IssueInvoiceHandler).execute(company, validatedBody(IssueInvoiceDto, invoice.build()));
}

function list(
  company: TestTenant,
  page: Partial<PageRequest>,
  filter?: Parameters<InvoiceQueries['list']>[2],
) {
  return tier.get(InvoiceQueries).list(company.id, { limit: 10, ...page }, filter);
}

/** Every page of the list, following `next` from `first`, as numbers. */
async function walk(
  company: TestTenant,
  first: Partial<PageRequest>,
  next: (page: InvoiceView[]) => Partial<PageRequest>,
): Promise<string[][]> {
  const pages: string[][] = [];
  let request = first;
  for (;;) {
    const page = await list(company, request);
    pages.push(page.data.map((invoice) => invoice.number));
    if (!page.hasMore) return pages;
    request = { ...first, ...next(page.data) };
  }
}

describe('InvoiceQueries (reads of one company)', () => {
  it('pages in (series, sequence) order, each page after the cursor, until hasMore is false', async () => {
    const company = await tier.newTenant();
    for (const series of ['B', 'A', 'B', 'A', 'C']) await issue(company, series);

    const pages = await walk(company, { limit: 2 }, (page) => ({ startingAfter: page.at(-1)?.id }));

    expect(pages).toEqual([['A-000001', 'A-000002'], ['B-000001', 'B-000002'], ['C-000001']]);
  });

  it('pages newest first with order desc, and backwards with endingBefore in either order', async () => {
    const company = await tier.newTenant();
    const issued: InvoiceView[] = [];
    for (let i = 0; i < 5; i++) issued.push(await issue(company, 'A'));

    const descending = await walk(company, { limit: 2, order: 'desc' }, (page) => ({
      startingAfter: page.at(-1)?.id,
    }));
    expect(descending).toEqual([['A-000005', 'A-000004'], ['A-000003', 'A-000002'], ['A-000001']]);

    // Backwards from the end: the pages before the cursor, each still in ascending order.
    const backwards = await walk(company, { limit: 2, endingBefore: issued[4].id }, (page) => ({
      endingBefore: page[0].id,
    }));
    expect(backwards).toEqual([
      ['A-000003', 'A-000004'],
      ['A-000001', 'A-000002'],
    ]);

    const backwardsDesc = await walk(
      company,
      { limit: 2, order: 'desc', endingBefore: issued[0].id },
      (page) => ({
        endingBefore: page[0].id,
      }),
    );
    expect(backwardsDesc).toEqual([
      ['A-000003', 'A-000002'],
      ['A-000005', 'A-000004'],
    ]);
  });

  it('filters by order, customer VAT id, issue dates and metadata, all together narrowing', async () => {
    const company = await tier.newTenant();
    const orderId = `order-${randomUUID()}`;
    const mine = await issue(company, 'A', (invoice) =>
      invoice.with({
        orderId,
        issueDate: '2026-11-15',
        customer: { name: 'UAB Pirkėjas', countryCode: 'LT', vatId: 'LT999000111222' },
        metadata: { crmId: 'deal-1', region: 'north' },
      }),
    );
    const other = await issue(company, 'A', (invoice) =>
      invoice.with({ issueDate: '2026-12-01', metadata: { crmId: 'deal-2', region: 'north' } }),
    );
    const numbersOf = async (filter: Parameters<InvoiceQueries['list']>[2]) =>
      (await list(company, {}, filter)).data.map((invoice) => invoice.id);

    expect(await numbersOf({ orderId })).toEqual([mine.id]);
    expect(await numbersOf({ customerVatId: 'LT999000111222' })).toEqual([mine.id]);
    expect(await numbersOf({ issueDateFrom: '2026-11-15', issueDateTo: '2026-11-15' })).toEqual([mine.id]);
    expect(await numbersOf({ issueDateFrom: '2026-11-16' })).toEqual([other.id]);
    expect(await numbersOf({ issueDateTo: '2026-11-30' })).toEqual([mine.id]);
    expect(await numbersOf({ metadata: { region: 'north' } })).toEqual([mine.id, other.id]);
    expect(await numbersOf({ metadata: { region: 'north', crmId: 'deal-2' } })).toEqual([other.id]);
    expect(await numbersOf({ metadata: { crmId: 'deal-3' } })).toEqual([]);
    expect(await numbersOf({ orderId, issueDateFrom: '2026-11-16' })).toEqual([]);
    expect(mine.metadata).toEqual({ crmId: 'deal-1', region: 'north' });
    expect((await tier.get(InvoiceQueries).get(company.id, mine.id)).metadata).toEqual(mine.metadata);
  });

  it('derives outstanding amount, payment and credit status from the running totals, and filters by them alike', async () => {
    const company = await tier.newTenant();
    const fresh = await issue(company, 'A');
    const partlyPaid = await issue(company, 'A');
    const paid = await issue(company, 'A');
    const partlyCredited = await issue(company, 'A');
    const credited = await issue(company, 'A');
    const creditedAndPaid = await issue(company, 'A');
    const paidThenCredited = await issue(company, 'A');
    await tier
      .get(RecordSettlementHandler)
      .execute(
        company,
        validatedBody(
          RecordSettlementDto,
          aSettlement()
            .allocating(partlyPaid.id, 5000)
            .allocating(paid.id, 12100)
            .allocating(creditedAndPaid.id, 6050)
            .allocating(paidThenCredited.id, 12100)
            .build(),
        ),
      );
    const creditNote = (invoiceId: string, lines?: unknown[]) =>
      tier
        .get(IssueCreditNoteHandler)
        .execute(
          company.id,
          validatedBody(IssueCreditNoteDto, { invoiceId, reason: 'other', ...(lines ? { lines } : {}) }),
        );
    await creditNote(partlyCredited.id, [
      { description: 'Refund', quantity: '1', unitPrice: 1000, vatRate: '21' },
    ]);
    await creditNote(credited.id);
    await creditNote(paidThenCredited.id);
    await creditNote(creditedAndPaid.id, [
      { description: 'Half', quantity: '1', unitPrice: 5000, vatRate: '21' },
    ]);

    const byId = new Map((await list(company, { limit: 100 })).data.map((invoice) => [invoice.id, invoice]));
    const statusOf = (invoice: InvoiceView) => {
      const view = byId.get(invoice.id) as InvoiceView;
      return [view.outstandingAmount, view.paymentStatus, view.creditStatus];
    };
    expect(statusOf(fresh)).toEqual([12100, 'unpaid', 'none']);
    expect(statusOf(partlyPaid)).toEqual([7100, 'partially_paid', 'none']);
    expect(statusOf(paid)).toEqual([0, 'paid', 'none']);
    expect(statusOf(partlyCredited)).toEqual([10890, 'unpaid', 'partially_credited']);
    // A fully credited invoice is owed nothing: never listed as unpaid.
    expect(statusOf(credited)).toEqual([0, 'paid', 'credited']);
    expect(statusOf(creditedAndPaid)).toEqual([0, 'paid', 'partially_credited']);
    // Paid in full, then credited in full: a refund of 12100 is due, nothing is owed.
    expect(statusOf(paidThenCredited)).toEqual([-12100, 'paid', 'credited']);

    // The views agree with the one TypeScript definition, and the SQL filters with the views.
    for (const view of byId.values()) expect(view).toMatchObject(invoiceStatusOf(view));
    for (const paymentStatus of INVOICE_PAYMENT_STATUSES) {
      const filtered = (await list(company, { limit: 100 }, { paymentStatus })).data.map(
        (invoice) => invoice.id,
      );
      expect(filtered).toEqual(
        [...byId.values()].filter((view) => view.paymentStatus === paymentStatus).map((view) => view.id),
      );
    }
    for (const creditStatus of INVOICE_CREDIT_STATUSES) {
      const filtered = (await list(company, { limit: 100 }, { creditStatus })).data.map(
        (invoice) => invoice.id,
      );
      expect(filtered).toEqual(
        [...byId.values()].filter((view) => view.creditStatus === creditStatus).map((view) => view.id),
      );
    }
  });

  it("never shows another company's invoice, not even as a cursor", async () => {
    const company = await tier.newTenant();
    const other = await tier.newTenant();
    const theirs = await issue(other, 'A');
    await issue(company, 'A');

    await expect(tier.get(InvoiceQueries).get(company.id, theirs.id)).rejects.toBeInstanceOf(
      InvoiceNotFoundError,
    );
    const empty = { object: 'list', data: [], hasMore: false };
    expect(await list(company, { startingAfter: theirs.id })).toEqual(empty);
    expect(await list(company, { endingBefore: theirs.id })).toEqual(empty);
    expect(await list(company, { startingAfter: randomUUID(), order: 'desc' })).toEqual(empty);
    expect((await list(company, {})).data.map((invoice) => invoice.id)).not.toContain(theirs.id);
  });
});
