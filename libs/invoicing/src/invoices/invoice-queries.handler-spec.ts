import { randomUUID } from 'node:crypto';
import {
  InvoiceNotFoundError,
  InvoiceQueries,
  type InvoiceView,
  IssueInvoiceDto,
  IssueInvoiceHandler,
} from '@ledgerkey/invoicing';
import {
  type TestTenant,
  useDocumentHandlers,
  validatedBody,
} from '../../../../test/support/document-handlers';
import { anInvoice } from '../../../../test/support/invoice.builder';

const tier = useDocumentHandlers();

function issue(company: TestTenant, series: string): Promise<InvoiceView> {
  const invoice = anInvoice().with({ series }).withLine();
  return tier.get(IssueInvoiceHandler).execute(company, validatedBody(IssueInvoiceDto, invoice.build()));
}

describe('InvoiceQueries (reads of one company)', () => {
  it('pages in (series, sequence) order, each page after the cursor, until hasMore is false', async () => {
    const company = await tier.newTenant();
    for (const series of ['B', 'A', 'B', 'A', 'C']) await issue(company, series);

    const numbers: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await tier.get(InvoiceQueries).list(company.id, 2, cursor);
      pages += 1;
      numbers.push(...page.data.map((invoice) => invoice.number));
      if (!page.hasMore) break;
      cursor = page.data.at(-1)?.id;
    }

    expect(numbers).toEqual(['A-000001', 'A-000002', 'B-000001', 'B-000002', 'C-000001']);
    expect(pages).toBe(3);
  });

  it("never shows another company's invoice, not even as a cursor", async () => {
    const company = await tier.newTenant();
    const other = await tier.newTenant();
    const theirs = await issue(other, 'A');
    await issue(company, 'A');

    await expect(tier.get(InvoiceQueries).get(company.id, theirs.id)).rejects.toBeInstanceOf(
      InvoiceNotFoundError,
    );
    expect(await tier.get(InvoiceQueries).list(company.id, 10, theirs.id)).toEqual({
      object: 'list',
      data: [],
      hasMore: false,
    });
    expect(await tier.get(InvoiceQueries).list(company.id, 10, randomUUID())).toEqual({
      object: 'list',
      data: [],
      hasMore: false,
    });
    expect(
      (await tier.get(InvoiceQueries).list(company.id, 10)).data.map((invoice) => invoice.id),
    ).not.toContain(theirs.id);
  });
});
