import { Module } from '@nestjs/common';
import { CompanyProfilesModule } from '@ledgerkey/tenancy';
import { IsafDocumentsRepository } from './isaf-export/isaf-documents.repository';
import { IsafExportQueries } from './isaf-export/isaf-export-queries';
import { IsafSettingsQueries } from './isaf-settings/isaf-settings-queries';
import { IsafSettingsRepository } from './isaf-settings/isaf-settings.repository';
import { UpdateIsafSettingsHandler } from './update-isaf-settings/update-isaf-settings.handler';
import { VatReportQueries } from './vat-report/vat-report-queries';

/**
 * Accounting outputs over the documents and the ledger (VAT report, i.SAF). It reads the document
 * tables by SQL, as a report does, and writes only its own settings.
 */
@Module({
  imports: [CompanyProfilesModule],
  providers: [
    VatReportQueries,
    IsafDocumentsRepository,
    IsafSettingsRepository,
    IsafSettingsQueries,
    IsafExportQueries,
    UpdateIsafSettingsHandler,
  ],
  exports: [VatReportQueries, IsafSettingsQueries, IsafExportQueries, UpdateIsafSettingsHandler],
})
export class ReportingModule {}
