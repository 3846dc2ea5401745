/** Business outcomes of the reporting outputs. Each has a stable `code`. */

export class CompanyProfileIncompleteError extends Error {
  readonly code = 'company_profile_incomplete';
}

export class IsafTaxCodeMissingError extends Error {
  readonly code = 'isaf_tax_code_missing';
  constructor(readonly vatRates: string[]) {
    super(
      `No i.SAF tax code is configured for VAT rate(s) ${vatRates.join(', ')} %: set them with ` +
        'POST /v1/company/isaf-settings/update.',
    );
  }
}

export class IsafCurrencyUnsupportedError extends Error {
  readonly code = 'isaf_currency_unsupported';
  constructor(currencies: string[]) {
    super(
      `i.SAF amounts are in EUR; the month has documents in ${currencies.join(', ')}, which this ` +
        'service does not convert. Declare them from another source.',
    );
  }
}
