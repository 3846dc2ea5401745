import { randomUUID } from 'node:crypto';
import {
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  IdempotencyModule,
  IdempotentExecutor,
  OPERATOR_TENANT_ID,
} from '@ledgerkey/idempotency';
import { CreateCompanyDto, CreateCompanyHandler, TenancyModule } from '@ledgerkey/tenancy';
import { aCompany, type CompanyBuilder } from '../../../../test/support/company.builder';
import { TEST_SEALER } from '../../../../test/support/test-sealer';
import { startHandlerContext, type HandlerContext } from '../../../../test/support/handler-context';
import { createCompanyOnce } from './create-company.operation';

function notUsedWithoutHttp(): never {
  throw new Error('not used without HTTP');
}

let ctx: HandlerContext;
let executor: IdempotentExecutor;
let handler: CreateCompanyHandler;

beforeAll(async () => {
  ctx = await startHandlerContext([
    TenancyModule,
    IdempotencyModule.forRootAsync({
      useFactory: () => ({
        ttlSeconds: 3600,
        sealer: TEST_SEALER,
        classifier: { classify: () => null },
        resolveScope: notUsedWithoutHttp,
        validateBody: notUsedWithoutHttp,
      }),
    }),
  ]);
  executor = ctx.app.get(IdempotentExecutor);
  handler = ctx.app.get(CreateCompanyHandler);
});

afterAll(async () => {
  await ctx?.close();
});

function create(key: string, company: CompanyBuilder) {
  return createCompanyOnce(executor, handler, key, Object.assign(new CreateCompanyDto(), company.build()));
}

async function companiesNamed(name: string): Promise<number> {
  const { rows } = await ctx.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM companies WHERE name = $1',
    [name],
  );
  return rows[0].n;
}

describe('creating a company under an idempotency key', () => {
  it('twice with one key: one company, and the retry replays the same API key', async () => {
    const company = aCompany();
    const key = `company-${randomUUID()}`;

    const first = await create(key, company);
    const retry = await create(key, company);

    expect(first).toMatchObject({ outcome: 'executed', status: 201 });
    expect(retry).toMatchObject({ outcome: 'replayed', status: 201, body: first.body });
    expect(JSON.parse(retry.body)).toEqual({
      companyId: expect.any(String),
      apiKey: expect.stringMatching(/^lk_/),
    });
    expect(await companiesNamed(company.build().name)).toBe(1);
  });

  it('the stored answer is sealed under the operator scope: the API key is nowhere in clear', async () => {
    const key = `company-${randomUUID()}`;
    const first = await create(key, aCompany());
    const { apiKey } = JSON.parse(first.body) as { apiKey: string };

    const { rows } = await ctx.db.query<{
      company_id: string;
      response_sealed: boolean;
      response_body: string;
    }>(
      `SELECT company_id, response_sealed, response_body FROM idempotency_records
        WHERE operation = 'admin.companies.create' AND idempotency_key = $1`,
      [key],
    );
    expect(rows).toEqual([
      { company_id: OPERATOR_TENANT_ID, response_sealed: true, response_body: TEST_SEALER.seal(first.body) },
    ]);
    const { rows: clear } = await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM idempotency_records r WHERE row_to_json(r)::text LIKE '%' || $1 || '%'`,
      [apiKey.slice('lk_'.length)],
    );
    expect(clear[0].n).toBe(0);
  });

  it('the same key with another company → IdempotencyKeyReusedError; nothing is created', async () => {
    const key = `company-${randomUUID()}`;
    await create(key, aCompany());
    const other = aCompany();

    await expect(create(key, other)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await companiesNamed(other.build().name)).toBe(0);
  });

  it('ten simultaneous calls with one key create one company; every success is that company', async () => {
    const company = aCompany();
    const key = `company-${randomUUID()}`;

    const results = await Promise.allSettled(Array.from({ length: 10 }, () => create(key, company)));

    const answers = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const refusals = results.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    expect(answers.filter((answer) => answer.outcome === 'executed')).toHaveLength(1);
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    for (const refusal of refusals) expect(refusal).toBeInstanceOf(IdempotencyKeyInUseError);
    expect(await companiesNamed(company.build().name)).toBe(1);
  });
});
