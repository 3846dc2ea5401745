import { normalizeSupplierName } from '@ledgerkey/purchasing';
import { supplierNameKeyAsOf1765000000000 } from '../../migrations/1765000000000-document-namespaces-supplier-identity';

/**
 * Migrations are snapshots: they import no application code (dependency-cruiser's
 * `migrations-are-snapshots`) and carry frozen copies of what they need instead. Where such a copy
 * produced stored values the application still compares with, it must agree with the live code.
 * When a case here fails because the live code changed on purpose, the stored values are stale:
 * add a migration that re-keys them; never edit the old migration's copy.
 */
describe('frozen copies in migrations', () => {
  it('1765000000000 backfilled supplier_name_key as normalizeSupplierName still computes it', () => {
    const names = [
      'UAB  Tiekėjas,',
      '„UAB Tiekėjas“',
      '  UAB Tiekėjas \t',
      'UAB\t\n\u00a0Tiekėjas',
      'A.B. Smith-Jones & Co.',
      'ＵＡＢ Tiekėjas',
      'Oﬃce Supplies',
      'Tieke\u0307jas',
      'İstanbul Ltd.',
      'ǅemal d.o.o.',
      'Straße & Söhne GmbH',
      'Ⅻ Corp',
      '株式会社　テスト',
      'A+B',
      '7 Seas Ltd.',
      '🍕 Pizza, Inc.',
      ' ..., — ',
      '',
    ];
    expect(names.map(supplierNameKeyAsOf1765000000000)).toEqual(names.map(normalizeSupplierName));
  });
});
