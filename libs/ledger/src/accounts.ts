/** The chart of accounts the posting rules use. Codes are stored on journal lines. */
export const Account = {
  AccountsReceivable: 'accounts_receivable',
  Revenue: 'revenue',
  VatPayable: 'vat_payable',
} as const;

export type AccountCode = (typeof Account)[keyof typeof Account];
