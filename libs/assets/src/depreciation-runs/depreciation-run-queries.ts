import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { DepreciationRunNotFoundError } from '../assets.errors';
import type { DepreciationRunListView, DepreciationRunView } from './depreciation-run.view';
import { DepreciationRunsRepository } from './depreciation-runs.repository';

/** Read side of depreciation runs, always within one company. */
@Injectable()
export class DepreciationRunQueries {
  constructor(private readonly runs: DepreciationRunsRepository) {}

  /** @throws DepreciationRunNotFoundError when the id is unknown in this company */
  async get(companyId: string, runId: string): Promise<DepreciationRunView> {
    const run = await this.runs.findById(companyId, runId);
    if (!run) throw new DepreciationRunNotFoundError(runId);
    return run;
  }

  async list(companyId: string, page: PageRequest): Promise<DepreciationRunListView> {
    return { object: 'list', ...(await this.runs.list(companyId, page)) };
  }
}
