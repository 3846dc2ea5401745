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
export { IsafExportQueryDto } from './isaf-export/isaf-export-query.dto';
export { IsafExportQueries } from './isaf-export/isaf-export-queries';
export { ISAF_NAMESPACE } from './isaf-export/isaf-file';
export type { IsafDataType } from './isaf-export/isaf-file';
export { IsafSettingsQueries } from './isaf-settings/isaf-settings-queries';
export { IsafSettingsView, IsafTaxCodeView } from './isaf-settings/isaf-settings.view';
export { DEFAULT_ISAF_TAX_CODES } from './isaf-settings/isaf-tax-codes';
export { UpdateIsafSettingsDto } from './update-isaf-settings/update-isaf-settings.dto';
export { UpdateIsafSettingsHandler } from './update-isaf-settings/update-isaf-settings.handler';
export {
  CompanyProfileIncompleteError,
  IsafCurrencyUnsupportedError,
  IsafTaxCodeMissingError,
} from './reporting.errors';
