import { Injectable } from '@nestjs/common';
import { DEFAULT_ISAF_TAX_CODES } from './isaf-tax-codes';
import { IsafSettingsRepository } from './isaf-settings.repository';
import type { IsafSettingsView } from './isaf-settings.view';

@Injectable()
export class IsafSettingsQueries {
  constructor(private readonly settings: IsafSettingsRepository) {}

  /** The mapping in force for the company: its own, or the defaults. */
  async get(companyId: string): Promise<IsafSettingsView> {
    const configured = await this.settings.findTaxCodes(companyId);
    return isafSettingsView(configured);
  }
}

export function isafSettingsView(configured: IsafSettingsView['taxCodes'] | null): IsafSettingsView {
  return {
    object: 'isaf_settings',
    taxCodes: configured ?? DEFAULT_ISAF_TAX_CODES.map((code) => ({ ...code })),
    configured: configured !== null,
  };
}
