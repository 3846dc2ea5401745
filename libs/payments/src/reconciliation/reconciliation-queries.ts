import { Injectable } from '@nestjs/common';
import { ReconciliationRunNotFoundError } from '../payments.errors';
import type { ReconciliationRunView } from './reconciliation-run.view';
import { ReconciliationRunsRepository } from './reconciliation-runs.repository';

/** Read side of reconciliation runs, always within one company. */
@Injectable()
export class ReconciliationQueries {
  constructor(private readonly runs: ReconciliationRunsRepository) {}

  /** @throws ReconciliationRunNotFoundError when the id is unknown in this company */
  async get(companyId: string, runId: string): Promise<ReconciliationRunView> {
    const run = await this.runs.findById(companyId, runId);
    if (!run) throw new ReconciliationRunNotFoundError(runId);
    return run;
  }
}
