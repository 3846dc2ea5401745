import type { INestApplicationContext } from '@nestjs/common';
import { TransactionHost, type PgTransactionalAdapter } from '@ledgerkey/database';
import { CompaniesRepository, CreateCompanyHandler, type CreatedCompany } from '@ledgerkey/tenancy';
import { ClsService } from 'nestjs-cls';

/** Arbitrary constant naming the "seeding the demo company" advisory lock. */
const DEMO_SEED_LOCK_ID = 7_314_501_227;

/**
 * On a database with no company at all, creates a demo company so a fresh checkout can make
 * its first request at once. Several processes may boot together: the advisory lock makes
 * exactly one of them create it.
 * @returns the new company and its API key, or null when a company already existed
 */
export async function ensureDemoCompany(app: INestApplicationContext): Promise<CreatedCompany | null> {
  const txHost = app.get<TransactionHost<PgTransactionalAdapter>>(TransactionHost);
  const companies = app.get(CompaniesRepository);
  const createCompany = app.get(CreateCompanyHandler);
  return app.get(ClsService).run(() =>
    txHost.withTransaction(async () => {
      await txHost.tx.query('SELECT pg_advisory_xact_lock($1)', [DEMO_SEED_LOCK_ID]);
      if (await companies.exists()) return null;
      return createCompany.execute({ name: 'Demo Company', countryCode: 'LT', currency: 'EUR' });
    }),
  );
}
