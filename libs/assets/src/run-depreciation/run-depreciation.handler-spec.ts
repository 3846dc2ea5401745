import { randomUUID } from 'node:crypto';
import { CreateCompanyHandler, TenancyModule } from '@ledgerkey/tenancy';
import { outcomesOf, validatedBody } from '../../../../test/support/document-handlers';
import { type HandlerContext, startHandlerContext } from '../../../../test/support/handler-context';
import { AssetsModule } from '../assets.module';
import { AssetPeriodClosedError, DepreciationAlreadyRunError } from '../assets.errors';
import { CreateAssetDto } from '../create-asset/create-asset.dto';
import { CreateAssetHandler } from '../create-asset/create-asset.handler';
import { FixedAssetQueries } from '../fixed-assets/fixed-asset-queries';
import type { DepreciationRunView } from '../depreciation-runs/depreciation-run.view';
import { RunDepreciationDto } from './run-depreciation.dto';
import { RunDepreciationHandler } from './run-depreciation.handler';

let ctx: HandlerContext;

beforeAll(async () => {
  ctx = await startHandlerContext([TenancyModule, AssetsModule]);
});
afterAll(async () => {
  await ctx?.close();
});

async function newCompany(): Promise<{ id: string; currency: string }> {
  const { companyId } = await ctx.app.get(CreateCompanyHandler).execute({
    name: `Company ${randomUUID()}`,
    countryCode: 'LT',
    currency: 'EUR',
  });
  return { id: companyId, currency: 'EUR' };
}

function createAsset(company: { id: string; currency: string }, body: object) {
  return ctx.app.get(CreateAssetHandler).execute(company, validatedBody(CreateAssetDto, body));
}

function run(company: { id: string; currency: string }, period: string): Promise<DepreciationRunView> {
  return ctx.app.get(RunDepreciationHandler).execute(company, validatedBody(RunDepreciationDto, { period }));
}

async function rows<Row>(sql: string, parameters: unknown[]): Promise<Row[]> {
  return (await ctx.db.query(sql, parameters)).rows as Row[];
}

/** The company's depreciation postings: per account, debit − credit; and whether every entry balances. */
async function books(companyId: string) {
  const balances = await rows<{ account: string; balance: string }>(
    `SELECT account, (sum(debit) - sum(credit))::text AS balance FROM journal_lines
      WHERE company_id = $1 GROUP BY account ORDER BY account`,
    [companyId],
  );
  const unbalanced = await rows<{ entry_id: string }>(
    `SELECT entry_id FROM journal_lines WHERE company_id = $1 GROUP BY entry_id HAVING sum(debit) <> sum(credit)`,
    [companyId],
  );
  return { balances: Object.fromEntries(balances.map((row) => [row.account, row.balance])), unbalanced };
}

const VAN = {
  name: 'Delivery van',
  cost: 100_000,
  residualValue: 10_000,
  usefulLifeMonths: 7,
  startMonth: '2026-11',
};

describe('depreciation runs', () => {
  it('ten concurrent runs of one period: one run, one entry per asset, the others name it', async () => {
    const company = await newCompany();
    const van = await createAsset(company, VAN);
    const laptop = await createAsset(company, {
      name: 'Laptop',
      cost: 150_000,
      usefulLifeMonths: 36,
      startMonth: '2026-10',
    });

    const { fulfilled, rejected } = await outcomesOf(
      Array.from({ length: 10 }, () => run(company, '2026-11')),
    );

    expect(fulfilled).toHaveLength(1);
    const [winner] = fulfilled;
    expect(rejected).toHaveLength(9);
    for (const error of rejected) {
      expect(error).toBeInstanceOf(DepreciationAlreadyRunError);
      expect(error).toMatchObject({ code: 'depreciation_already_run', existingRunId: winner.id });
    }
    expect(
      winner.charges.map(({ assetId, monthNumber, amount }) => ({ assetId, monthNumber, amount })),
    ).toEqual([
      { assetId: van.id, monthNumber: 1, amount: 12_857 },
      { assetId: laptop.id, monthNumber: 2, amount: 4_166 },
    ]);
    expect(winner.totalAmount).toBe(12_857 + 4_166);
    const entries = await rows<{ source_id: string; entry_date: string }>(
      `SELECT source_id, to_char(entry_date, 'YYYY-MM-DD') AS entry_date FROM journal_entries
        WHERE company_id = $1 AND source_type = 'depreciation_charge' ORDER BY seq`,
      [company.id],
    );
    expect(entries).toEqual(
      winner.charges.map((charge) => ({ source_id: charge.id, entry_date: '2026-11-30' })),
    );
    expect(await books(company.id)).toEqual({
      balances: {
        accumulated_depreciation: String(-(12_857 + 4_166)),
        depreciation_expense: String(12_857 + 4_166),
      },
      unbalanced: [],
    });
  });

  it('a later run of the same period → DepreciationAlreadyRunError naming the first; nothing posted', async () => {
    const company = await newCompany();
    await createAsset(company, VAN);
    const first = await run(company, '2026-12');

    await expect(run(company, '2026-12')).rejects.toMatchObject({
      code: 'depreciation_already_run',
      existingRunId: first.id,
    });
    const [{ n }] = await rows<{ n: number }>(
      `SELECT count(*)::int AS n FROM journal_entries WHERE company_id = $1`,
      [company.id],
    );
    expect(n).toBe(1);
  });

  it('the database refuses a second charge of an asset for a period, whatever run posts it', async () => {
    const company = await newCompany();
    const van = await createAsset(company, VAN);
    const first = await run(company, '2026-11');
    const otherRun = randomUUID();
    await ctx.db.query(
      `INSERT INTO depreciation_runs (company_id, id, period, currency, total_amount, created_at)
       VALUES ($1, $2, '2027-01-01', 'EUR', 0, now())`,
      [company.id, otherRun],
    );

    await expect(
      ctx.db.query(
        `INSERT INTO depreciation_charges (company_id, id, run_id, asset_id, period, month_number, amount)
         VALUES ($1, gen_random_uuid(), $2, $3, '2026-11-01', 9, 1)`,
        [company.id, otherRun, van.id],
      ),
    ).rejects.toMatchObject({ code: '23505', constraint: 'uq_depreciation_charges_company_asset_period' });
    await expect(
      ctx.db.query(
        `UPDATE depreciation_charges SET amount = amount + 1 WHERE company_id = $1 AND run_id = $2`,
        [company.id, first.id],
      ),
    ).rejects.toMatchObject({ message: 'depreciation_charges rows are immutable' });
  });

  it('over the whole life the asset is depreciated to its residual value; the last month takes the remainder', async () => {
    const company = await newCompany();
    const van = await createAsset(company, VAN);
    const months = [
      '2026-10',
      '2026-11',
      '2026-12',
      '2027-01',
      '2027-02',
      '2027-03',
      '2027-04',
      '2027-05',
      '2027-06',
    ];

    const runs = [];
    for (const month of months) runs.push(await run(company, month));

    expect(runs.map((r) => r.totalAmount)).toEqual([
      0, 12_857, 12_857, 12_857, 12_857, 12_857, 12_857, 12_858, 0,
    ]);
    expect(await ctx.app.get(FixedAssetQueries).get(company.id, van.id)).toMatchObject({
      depreciatedTotal: 90_000,
      bookValue: 10_000,
      endMonth: '2027-05',
    });
    expect((await books(company.id)).balances).toEqual({
      accumulated_depreciation: '-90000',
      depreciation_expense: '90000',
    });
  });

  it('an asset cannot start in a period already depreciated (no month of its life is skipped)', async () => {
    const company = await newCompany();
    await run(company, '2026-11');

    await expect(createAsset(company, { ...VAN, startMonth: '2026-11' })).rejects.toBeInstanceOf(
      AssetPeriodClosedError,
    );
    await expect(createAsset(company, { ...VAN, startMonth: '2026-12' })).resolves.toMatchObject({
      startMonth: '2026-12',
    });
  });
});
