import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { AssetNotFoundError } from '../assets.errors';
import type { FixedAssetListView, FixedAssetView } from './fixed-asset.view';
import { FixedAssetsRepository } from './fixed-assets.repository';

/** Read side of fixed assets, always within one company. */
@Injectable()
export class FixedAssetQueries {
  constructor(private readonly assets: FixedAssetsRepository) {}

  /** @throws AssetNotFoundError when the id is unknown in this company (also another company's id) */
  async get(companyId: string, assetId: string): Promise<FixedAssetView> {
    const asset = await this.assets.findById(companyId, assetId);
    if (!asset) throw new AssetNotFoundError(assetId);
    return asset;
  }

  async list(companyId: string, page: PageRequest): Promise<FixedAssetListView> {
    return { object: 'list', ...(await this.assets.list(companyId, page)) };
  }
}
