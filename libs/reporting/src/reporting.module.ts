import { Module } from '@nestjs/common';
import { VatReportQueries } from './vat-report/vat-report-queries';

/**
 * Read-only accounting outputs over the documents and the ledger (VAT report, i.SAF). It reads
 * the document tables by SQL, as a report does, and writes nothing.
 */
@Module({
  providers: [VatReportQueries],
  exports: [VatReportQueries],
})
export class ReportingModule {}
