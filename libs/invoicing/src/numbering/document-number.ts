/** `INV-000001`: series, a dash, the gapless sequence zero-padded to six digits. */
export function formatDocumentNumber(series: string, sequence: number): string {
  return `${series}-${String(sequence).padStart(6, '0')}`;
}
