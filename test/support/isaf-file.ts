import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { newKey } from './invoice.builder';
import type { TestApp, TestCompany } from './test-app';

/** The registration number the header must carry (VMI's taxpayer code). */
export const REGISTRATION_NUMBER = '304567890';

export interface DocumentTotal {
  TaxableValue: string;
  TaxCode: string;
  TaxPercentage: string;
  Amount: string;
  VATPointDate2?: { '@_xsi:nil': string };
}
export interface IsafInvoice {
  InvoiceNo: string;
  CustomerInfo?: Record<string, string>;
  SupplierInfo?: Record<string, string>;
  InvoiceDate: string;
  InvoiceType: string;
  References: '' | { Reference: Array<{ ReferenceNo: string; ReferenceDate: string }> };
  VATPointDate: string;
  RegistrationAccountDate?: string;
  DocumentTotals: { DocumentTotal: DocumentTotal[] };
}
export interface IsafFile {
  iSAFFile: {
    '@_xmlns': string;
    Header: { FileDescription: Record<string, unknown> };
    SourceDocuments: {
      PurchaseInvoices?: '' | { Invoice: IsafInvoice[] };
      SalesInvoices?: '' | { Invoice: IsafInvoice[] };
    };
  };
}

/** An independent XML parser: what the service wrote must read back as i.SAF. */
const parser = new XMLParser({
  ignoreAttributes: false,
  parseTagValue: false,
  isArray: (name) => ['Invoice', 'DocumentTotal', 'Reference'].includes(name),
});

export function parse(xml: string): IsafFile {
  expect(XMLValidator.validate(xml)).toBe(true);
  return parser.parse(xml) as IsafFile;
}

export function invoicesOf(section: '' | { Invoice: IsafInvoice[] } | undefined): IsafInvoice[] {
  return section === undefined || section === '' ? [] : section.Invoice;
}

/** Σ per tax code over the documents' totals, in cents. */
export function totalsPerTaxCode(invoices: IsafInvoice[]): Record<string, { taxable: number; vat: number }> {
  const sums: Record<string, { taxable: number; vat: number }> = {};
  for (const invoice of invoices) {
    for (const total of invoice.DocumentTotals.DocumentTotal) {
      const sum = (sums[total.TaxCode] ??= { taxable: 0, vat: 0 });
      sum.taxable += Math.round(Number(total.TaxableValue) * 100);
      sum.vat += Math.round(Number(total.Amount) * 100);
    }
  }
  return sums;
}

/** Today, its month (YYYY-MM), the month's last day and the previous month's last day (UTC). */
export function isafDates(): { today: string; month: string; monthEnd: string; lastMonthDay: string } {
  const today = new Date().toISOString().slice(0, 10);
  const month = today.slice(0, 7);
  const monthEnd = (() => {
    const date = new Date(`${month}-01T00:00:00Z`);
    date.setUTCMonth(date.getUTCMonth() + 1, 0);
    return date.toISOString().slice(0, 10);
  })();
  const lastMonthDay = (() => {
    const date = new Date(`${month}-01T00:00:00Z`);
    date.setUTCDate(0);
    return date.toISOString().slice(0, 10);
  })();
  return { today, month, monthEnd, lastMonthDay };
}

/** Companies, documents and the export, on the spec's app (`ctx()`, started in its beforeAll). */
export function isafCalls(ctx: () => { t: TestApp }) {
  const companyWithProfile = () =>
    ctx().t.newCompany({ profile: { legalName: 'UAB Pardavėjas', registrationNumber: REGISTRATION_NUMBER } });

  async function post(company: TestCompany, path: string, body: object) {
    const response = await ctx()
      .t.http.post(path)
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(201);
    return response.body;
  }

  const exportIsaf = (company: TestCompany, query: string) =>
    ctx()
      .t.http.get(`/v1/exports/isaf?${query}`)
      .set(company.auth)
      .buffer(true)
      .parse((response, done) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => done(null, text));
      });

  return { companyWithProfile, post, exportIsaf };
}
