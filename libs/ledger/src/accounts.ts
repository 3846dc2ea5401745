/** The chart of accounts the posting rules use. Codes are stored on journal lines. */
export const Account = {
  AccountsReceivable: 'accounts_receivable',
  Revenue: 'revenue',
  VatPayable: 'vat_payable',
  Bank: 'bank',
  PaymentFees: 'payment_fees',
  Expense: 'expense',
  VatReceivable: 'vat_receivable',
  AccountsPayable: 'accounts_payable',
  /** Money a payment provider collected for us and has not paid out yet. */
  ProviderClearing: 'provider_clearing',
  /** The period's share of fixed assets' cost (straight-line depreciation). */
  DepreciationExpense: 'depreciation_expense',
  /** Contra-asset: the cost of fixed assets depreciated so far. */
  AccumulatedDepreciation: 'accumulated_depreciation',
} as const;

export type AccountCode = (typeof Account)[keyof typeof Account];
