import { Injectable } from '@nestjs/common';
import { CompanyProfileQueries } from '@ledgerkey/tenancy';
import { DEFAULT_ISAF_TAX_CODES, taxCodeMap } from '../isaf-settings/isaf-tax-codes';
import { IsafSettingsRepository } from '../isaf-settings/isaf-settings.repository';
import {
  CompanyProfileIncompleteError,
  IsafCurrencyUnsupportedError,
  IsafTaxCodeMissingError,
} from '../reporting.errors';
import { type BreakdownRow, IsafDocumentsRepository } from './isaf-documents.repository';
import { monthPeriod } from './isaf-export-query.dto';
import { ISAF_CURRENCY, type IsafDataType, type IsafDocumentTotal } from './isaf-file';

/** The software named in the file's header. */
export const ISAF_SOFTWARE = { companyName: 'ledgerkey', name: 'ledgerkey', version: '1' } as const;

/** VMI's taxpayer code in the header: 1–11 digits. */
const REGISTRATION_NUMBER = /^[0-9]{1,11}$/;

@Injectable()
export class IsafExportQueries {
  constructor(
    private readonly documents: IsafDocumentsRepository,
    private readonly settings: IsafSettingsRepository,
    private readonly profiles: CompanyProfileQueries,
  ) {}

  /**
   * The i.SAF 1.2 file of a month: invoices (SF) and credit notes (KS, referencing the invoice)
   * issued in the month, and purchase invoices dated in it, per VAT rate under the company's
   * tax codes. Documents count on the same dates as in the VAT report.
   * @throws CompanyProfileIncompleteError when the profile has no registration number of 1–11 digits
   * @throws IsafTaxCodeMissingError when a document's VAT rate has no tax code
   * @throws IsafCurrencyUnsupportedError when a document of the month is not in EUR
   */
  async export(companyId: string, month: string, dataType: IsafDataType, now = new Date()): Promise<string> {
    const profile = await this.profiles.sellerOf(companyId);
    const registrationNumber = profile.registrationNumber;
    if (registrationNumber === null || !REGISTRATION_NUMBER.test(registrationNumber)) {
      throw new CompanyProfileIncompleteError(
        'i.SAF names the company by its registration number (1–11 digits): set `registrationNumber` ' +
          'with POST /v1/company/profile/update.',
      );
    }
    const period = monthPeriod(month);
    const sales = dataType === 'P' ? [] : await this.documents.sales(companyId, period);
    const purchases = dataType === 'S' ? [] : await this.documents.purchases(companyId, period);

    const foreign = new Set(
      [...sales, ...purchases].map((row) => row.currency).filter((c) => c !== ISAF_CURRENCY),
    );
    if (foreign.size > 0) throw new IsafCurrencyUnsupportedError([...foreign].sort());
    const codes = taxCodeMap((await this.settings.findTaxCodes(companyId)) ?? DEFAULT_ISAF_TAX_CODES);
    const unmapped = new Set<string>();
    const totals = (breakdown: BreakdownRow[], sign: 1 | -1): IsafDocumentTotal[] =>
      breakdown.map((row) => {
        const taxCode = codes.get(row.vatRate);
        if (taxCode === undefined) unmapped.add(row.vatRate);
        return {
          vatRate: row.vatRate,
          taxCode: taxCode ?? '',
          taxableValue: sign * row.netAmount,
          vatAmount: sign * row.vatAmount,
        };
      });

    const file = {
      dataType,
      createdAt: now,
      software: ISAF_SOFTWARE,
      registrationNumber,
      period,
      sales: sales.map((row) => ({
        number: row.number,
        party: {
          vatId: row.customer.vatId ?? null,
          countryCode: row.customer.countryCode,
          name: row.customer.name,
        },
        date: row.date,
        type: row.kind === 'invoice' ? ('SF' as const) : ('KS' as const),
        reference:
          row.invoice_number === null || row.invoice_date === null
            ? null
            : { number: row.invoice_number, date: row.invoice_date },
        // A credit note reduces the period's sales: its amounts are negative.
        totals: totals(row.vat_breakdown, row.kind === 'invoice' ? 1 : -1),
      })),
      purchases: purchases.map((row) => ({
        number: row.document_number,
        party: {
          vatId: row.supplier.vatId ?? null,
          countryCode: row.supplier.countryCode,
          name: row.supplier.name,
        },
        date: row.date,
        registrationDate: row.registration_date,
        totals: totals(row.vat_breakdown, 1),
      })),
    };
    if (unmapped.size > 0) {
      throw new IsafTaxCodeMissingError([...unmapped].sort((a, b) => Number(b) - Number(a)));
    }
    // The XML builder loads with the first export, not with every process that could export.
    const { buildIsafFile } = await import('./isaf-xml.js');
    return buildIsafFile(file);
  }
}
