import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { isafSettingsView } from '../isaf-settings/isaf-settings-queries';
import { IsafSettingsRepository } from '../isaf-settings/isaf-settings.repository';
import type { IsafSettingsView } from '../isaf-settings/isaf-settings.view';
import type { UpdateIsafSettingsDto } from './update-isaf-settings.dto';

@Injectable()
export class UpdateIsafSettingsHandler {
  constructor(private readonly settings: IsafSettingsRepository) {}

  /**
   * Replaces the company's VAT rate → i.SAF tax code mapping as a whole (the defaults no longer
   * apply). Exports made afterwards use it; nothing already exported changes.
   */
  @Transactional()
  async execute(companyId: string, dto: UpdateIsafSettingsDto, now = new Date()): Promise<IsafSettingsView> {
    const taxCodes = dto.fingerprintPayload();
    await this.settings.replaceTaxCodes(companyId, taxCodes, now);
    return isafSettingsView(taxCodes);
  }
}
