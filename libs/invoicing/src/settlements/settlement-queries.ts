import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { SettlementNotFoundError } from '../invoicing.errors';
import type { SettlementListView, SettlementView } from './settlement.view';
import { type SettlementListFilter, SettlementsRepository } from './settlements.repository';

/** Read side of settlements, always within one company. */
@Injectable()
export class SettlementQueries {
  constructor(private readonly settlements: SettlementsRepository) {}

  /** @throws SettlementNotFoundError when the id is unknown in this company (also another company's id) */
  async get(companyId: string, settlementId: string): Promise<SettlementView> {
    const settlement = await this.settlements.findById(companyId, settlementId);
    if (!settlement) throw new SettlementNotFoundError(settlementId);
    return settlement;
  }

  async list(
    companyId: string,
    page: PageRequest,
    filter?: SettlementListFilter,
  ): Promise<SettlementListView> {
    return { object: 'list', ...(await this.settlements.list(companyId, page, filter)) };
  }
}
