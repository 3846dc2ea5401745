import {
  normalizeDocumentNumber,
  normalizeSupplierName,
  normalizeVatId,
  supplierDocumentOf,
  supplierIdentityOf,
  supplierKeyOf,
} from './supplier-key';

describe('normalizeSupplierName', () => {
  it.each([
    ['collapses runs of spaces and drops a trailing comma', 'UAB  Tiekėjas,', 'uab tiekėjas'],
    ['lower-cases, keeping diacritics', 'UAB TIEKĖJAS', 'uab tiekėjas'],
    ['trims', '  UAB Tiekėjas \t', 'uab tiekėjas'],
    ['treats tabs, line feeds and no-break spaces as spaces', 'UAB\t\n\u00a0Tiekėjas', 'uab tiekėjas'],
    ['removes Unicode quotation marks', '„UAB Tiekėjas“', 'uab tiekėjas'],
    ['removes dots, dashes and ampersands inside words', 'A.B. Smith-Jones & Co.', 'ab smithjones co'],
    ['folds compatibility forms (NFKC): full-width letters', 'ＵＡＢ Tiekėjas', 'uab tiekėjas'],
    ['folds compatibility forms (NFKC): ligatures', 'Oﬃce Supplies', 'office supplies'],
    ['composes decomposed letters (NFKC)', 'Tieke\u0307jas', 'tiekėjas'],
    ['keeps symbols that are not punctuation', 'A+B', 'a+b'],
    ['keeps digits', '7 Seas Ltd.', '7 seas ltd'],
  ])('%s', (_name, input, expected) => {
    expect(normalizeSupplierName(input)).toBe(expected);
  });

  it('returns an empty string for a name of only punctuation and spaces', () => {
    expect(normalizeSupplierName(' ..., — ')).toBe('');
  });

  it('is idempotent', () => {
    for (const name of ['UAB  Tiekėjas,', 'İstanbul Ltd.', 'ＵＡＢ Oﬃce']) {
      const once = normalizeSupplierName(name);
      expect(normalizeSupplierName(once)).toBe(once);
    }
  });
});

describe('normalizeVatId', () => {
  it('upper-cases and removes white space', () => {
    expect(normalizeVatId(' lt 1000 0123 4567 ')).toBe('LT100001234567');
  });
});

describe('supplierKeyOf', () => {
  it('is vat: + the VAT id when the supplier has one, whatever its name', () => {
    expect(supplierKeyOf({ name: 'UAB Tiekėjas', vatId: 'LT100001234567' })).toBe('vat:LT100001234567');
    expect(supplierKeyOf({ name: 'Tiekėjas, UAB', vatId: 'lt100001234567' })).toBe('vat:LT100001234567');
  });

  it('is name: + the normalized name without a VAT id', () => {
    expect(supplierKeyOf({ name: 'UAB  Tiekėjas,' })).toBe('name:uab tiekėjas');
    expect(supplierKeyOf({ name: 'uab tiekėjas', vatId: null })).toBe('name:uab tiekėjas');
  });

  it('falls back to the name when the VAT id is only white space', () => {
    expect(supplierKeyOf({ name: 'UAB Tiekėjas', vatId: '  ' })).toBe('name:uab tiekėjas');
  });

  it('never confuses a name with a VAT id: the prefixes differ', () => {
    expect(supplierKeyOf({ name: 'LT100001234567' })).not.toBe(
      supplierKeyOf({ name: 'x', vatId: 'LT100001234567' }),
    );
  });

  it('throws when there is no identity at all (validation must refuse such a supplier first)', () => {
    expect(() => supplierKeyOf({ name: ' ... ' })).toThrow(Error);
  });
});

describe('supplierIdentityOf', () => {
  it('keeps both the VAT id and the normalized name: the rule compares names when one side has no VAT id', () => {
    expect(supplierIdentityOf({ name: 'UAB  Tiekėjas,', vatId: ' lt100001234567 ' })).toEqual({
      vatId: 'LT100001234567',
      nameKey: 'uab tiekėjas',
    });
  });

  it('has a null VAT id when there is none (absent, null or only white space)', () => {
    for (const vatId of [undefined, null, '  ']) {
      expect(supplierIdentityOf({ name: 'UAB Tiekėjas', vatId })).toEqual({
        vatId: null,
        nameKey: 'uab tiekėjas',
      });
    }
  });

  it('may have an empty name key when a VAT id identifies the supplier', () => {
    expect(supplierIdentityOf({ name: '—', vatId: 'LT100001234567' })).toEqual({
      vatId: 'LT100001234567',
      nameKey: '',
    });
  });

  it('throws when there is no identity at all', () => {
    expect(() => supplierIdentityOf({ name: ' ... ', vatId: null })).toThrow(Error);
  });
});

describe('supplierDocumentOf', () => {
  it('is what the database stores: backstop key, VAT id, name key and document key agree', () => {
    expect(supplierDocumentOf({ name: 'UAB Tiekejas', vatId: 'LT100009999999' }, ' tk-2026/0042 ')).toEqual({
      supplierKey: 'vat:LT100009999999',
      vatId: 'LT100009999999',
      nameKey: 'uab tiekejas',
      documentKey: 'TK-2026/0042',
    });
    expect(supplierDocumentOf({ name: 'UAB Tiekejas' }, 'TK-2026/0042')).toEqual({
      supplierKey: 'name:uab tiekejas',
      vatId: null,
      nameKey: 'uab tiekejas',
      documentKey: 'TK-2026/0042',
    });
  });
});

describe('normalizeDocumentNumber', () => {
  it.each([
    ['"inv 001" and "INV001"', 'inv 001', 'INV001'],
    ['surrounding spaces', '  INV-001  ', 'INV-001'],
    ['internal tabs and no-break spaces', 'INV\t00\u00a01', 'INV001'],
    ['punctuation is kept: "INV-001" is not "INV001"', 'inv-001', 'INV-001'],
  ])('%s', (_name, input, expected) => {
    expect(normalizeDocumentNumber(input)).toBe(expected);
  });

  it('may lengthen a number when upper-casing does ("ß" → "SS")', () => {
    expect(normalizeDocumentNumber('straße 1')).toBe('STRASSE1');
  });
});
