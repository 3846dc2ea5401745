/** Metadata inside and outside the schema's bounds (`is_valid_metadata`, Metadata1766200000000). */
export const VALID_METADATA: unknown[] = [
  { a: 'b' },
  {},
  Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'.repeat(500)])),
];

export const INVALID_METADATA: unknown[] = [
  [],
  'text',
  { a: 1 },
  { a: {} },
  { '': 'x' },
  { 'a[b]': 'x' },
  { ['k'.repeat(41)]: 'x' },
  { a: 'v'.repeat(501) },
  Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
];
