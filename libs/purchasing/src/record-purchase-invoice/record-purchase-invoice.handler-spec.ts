import { DueDateBeforeIssueDateError } from '@ledgerkey/documents';
import {
  PurchaseInvoiceDuplicateError,
  PurchaseInvoiceQueries,
  type PurchaseInvoiceView,
  RecordPurchaseInvoiceDto,
  RecordPurchaseInvoiceHandler,
} from '@ledgerkey/purchasing';
import {
  outcomesOf,
  type TestTenant,
  useDocumentHandlers,
  validatedBody,
} from '../../../../test/support/document-handlers';
import {
  aPurchaseInvoice,
  type PurchaseInvoiceBuilder,
} from '../../../../test/support/purchase-invoice.builder';

const tier = useDocumentHandlers();

function record(company: TestTenant, invoice: PurchaseInvoiceBuilder): Promise<PurchaseInvoiceView> {
  return tier
    .get(RecordPurchaseInvoiceHandler)
    .execute(company, validatedBody(RecordPurchaseInvoiceDto, invoice.build()));
}

/** A second upload of the same supplier document, as `record` answers it. */
async function duplicateOf(company: TestTenant, invoice: PurchaseInvoiceBuilder): Promise<unknown> {
  return record(company, invoice).then(
    () => 'recorded',
    (error: unknown) =>
      error instanceof PurchaseInvoiceDuplicateError
        ? error.existingPurchaseInvoiceId
        : Promise.reject(error),
  );
}

const supplier = (name: string, vatId?: string) => ({ name, countryCode: 'LT', ...(vatId ? { vatId } : {}) });

describe('RecordPurchaseInvoiceHandler: one record per supplier document', () => {
  it('matches numbers upper-cased without spaces, and suppliers by VAT id whatever their names', async () => {
    const company = await tier.newTenant();
    const first = await record(
      company,
      aPurchaseInvoice()
        .withDocumentNumber('inv 001')
        .withSupplier(supplier('UAB Tiekėjas', 'LT100009876543')),
    );
    const again = aPurchaseInvoice()
      .withDocumentNumber('INV001')
      .withSupplier(supplier('Tiekėjas, UAB', 'LT100009876543'));

    expect(await duplicateOf(company, again)).toBe(first.id);
  });

  it('keeps two suppliers apart when their VAT ids differ, whatever their names', async () => {
    const company = await tier.newTenant();
    await record(
      company,
      aPurchaseInvoice().withDocumentNumber('A-1').withSupplier(supplier('UAB X', 'LT1')),
    );

    expect(
      await duplicateOf(
        company,
        aPurchaseInvoice().withDocumentNumber('A-1').withSupplier(supplier('UAB X', 'LT2')),
      ),
    ).toBe('recorded');
  });

  it('compares normalized names when only one side has a VAT id', async () => {
    const company = await tier.newTenant();
    const withVat = await record(
      company,
      aPurchaseInvoice().withDocumentNumber('B-7').withSupplier(supplier('UAB Tiekėjas', 'LT100009876543')),
    );

    expect(
      await duplicateOf(
        company,
        aPurchaseInvoice().withDocumentNumber('b-7').withSupplier(supplier('uab  tiekėjas,')),
      ),
    ).toBe(withVat.id);
    expect(
      await duplicateOf(
        company,
        aPurchaseInvoice().withDocumentNumber('B-7').withSupplier(supplier('UAB Kitas')),
      ),
    ).toBe('recorded');
  });

  it('records one of six concurrent uploads of a document; the others name it', async () => {
    const company = await tier.newTenant();
    const upload = aPurchaseInvoice().withDocumentNumber('C-3').withSupplier(supplier('UAB Tiekėjas'));
    const { fulfilled, rejected } = await outcomesOf(
      Array.from({ length: 6 }, () => record(company, upload)),
    );

    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(5);
    for (const error of rejected) {
      expect(error).toMatchObject({
        code: 'purchase_invoice_duplicate',
        documentNumber: 'C-3',
        existingPurchaseInvoiceId: fulfilled[0].id,
      });
    }
    const rows = await tier.query('SELECT id FROM purchase_invoices WHERE company_id = $1', [company.id]);
    expect(rows).toEqual([{ id: fulfilled[0].id }]);
  });
});

describe('RecordPurchaseInvoiceHandler: the books', () => {
  it('posts expense and VAT receivable against payables, appends one event, answers what GET answers', async () => {
    const company = await tier.newTenant();
    const invoice = await record(
      company,
      aPurchaseInvoice()
        .withLine({ quantity: '3', unitPrice: 999, vatRate: '21' })
        .withLine({ vatRate: '0' }),
    );

    expect(invoice).toMatchObject({ netTotal: 12997, vatTotal: 629, grossTotal: 13626 });
    expect(await tier.journalOf(company.id, invoice.id)).toEqual([
      { account: 'expense', debit: 12997, credit: 0 },
      { account: 'vat_receivable', debit: 629, credit: 0 },
      { account: 'accounts_payable', debit: 0, credit: 13626 },
    ]);
    expect(await tier.eventsOf(company.id)).toEqual([{ type: 'purchase_invoice.created', object: invoice }]);
    const stored = await tier.get(PurchaseInvoiceQueries).get(company.id, invoice.id);
    expect(JSON.stringify(stored)).toBe(JSON.stringify(invoice));
  });

  it('refuses a due date before the issue date and records nothing', async () => {
    const company = await tier.newTenant();

    await expect(
      record(company, aPurchaseInvoice().with({ issueDate: '2026-02-01', dueDate: '2026-01-31' })),
    ).rejects.toBeInstanceOf(DueDateBeforeIssueDateError);
    const rows = await tier.query('SELECT 1 FROM purchase_invoices WHERE company_id = $1', [company.id]);
    expect(rows).toHaveLength(0);
  });
});
