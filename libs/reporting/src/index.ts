export { ReportingModule } from './reporting.module';
export type { ReportingPeriod } from './reporting-period';
export { VatReportQueryDto } from './vat-report/vat-report-query.dto';
export { VatReportQueries } from './vat-report/vat-report-queries';
export {
  VatRateRowView,
  VatReportCurrencyView,
  VatReportTotalsView,
  VatReportView,
} from './vat-report/vat-report.view';
