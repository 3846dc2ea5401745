/**
 * A seller snapshot for invoice and credit-note rows that tests write through SQL (the column
 * is NOT NULL, and the API reads it back as a whole profile).
 */
export const SQL_SELLER = JSON.stringify({
  legalName: 'SQL Seller',
  vatId: null,
  registrationNumber: null,
  address: { street: null, city: null, postalCode: null, countryCode: 'LT' },
  iban: null,
  email: null,
  peppolId: null,
});
