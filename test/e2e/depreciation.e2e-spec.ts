import { newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const VAN = {
  name: 'Delivery van',
  cost: 2_400_000,
  residualValue: 400_000,
  usefulLifeMonths: 60,
  startMonth: '2026-11',
};

describe('fixed assets and depreciation runs over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (company: TestCompany, path: string, body: object, key = newKey('dep')) =>
    t.http.post(path).set(company.auth).set('Idempotency-Key', key).send(body);

  it('creates an asset, depreciates a month, and lists both; the entry is dated the period end', async () => {
    const company = await t.newCompany();

    const asset = await post(company, '/v1/assets/create', VAN);
    expect(asset.status).toBe(201);
    expect(asset.headers.location).toBe(`/v1/assets/${asset.body.id}`);
    expect(asset.body).toEqual({
      id: expect.stringMatching(UUID),
      object: 'asset',
      name: 'Delivery van',
      currency: 'EUR',
      cost: 2_400_000,
      residualValue: 400_000,
      usefulLifeMonths: 60,
      startMonth: '2026-11',
      endMonth: '2031-10',
      monthlyDepreciation: 33_333,
      depreciatedTotal: 0,
      bookValue: 2_400_000,
      createdAt: expect.any(String),
    });

    const run = await post(company, '/v1/depreciation-runs/create', { period: '2026-11' });
    expect(run.status).toBe(201);
    expect(run.body).toEqual({
      id: expect.stringMatching(UUID),
      object: 'depreciation_run',
      period: '2026-11',
      currency: 'EUR',
      totalAmount: 33_333,
      charges: [{ id: expect.stringMatching(UUID), assetId: asset.body.id, monthNumber: 1, amount: 33_333 }],
      createdAt: expect.any(String),
    });

    expect((await t.http.get(`/v1/depreciation-runs/${run.body.id}`).set(company.auth)).text).toBe(run.text);
    expect((await t.http.get('/v1/depreciation-runs').set(company.auth)).body).toEqual({
      object: 'list',
      data: [run.body],
      hasMore: false,
    });
    expect((await t.http.get(`/v1/assets/${asset.body.id}`).set(company.auth)).body).toMatchObject({
      depreciatedTotal: 33_333,
      bookValue: 2_366_667,
    });
    const entries = await t.http.get('/v1/ledger/entries').set(company.auth);
    expect(entries.body.data).toEqual([
      expect.objectContaining({
        sourceType: 'depreciation_charge',
        sourceId: run.body.charges[0].id,
        entryDate: '2026-11-30',
        lines: [
          { account: 'depreciation_expense', debit: 33_333, credit: 0 },
          { account: 'accumulated_depreciation', debit: 0, credit: 33_333 },
        ],
      }),
    ]);
  });

  it('a second run of the period under another key → 409 depreciation_already_run with existingRunId, replayed under its key', async () => {
    const company = await t.newCompany();
    await post(company, '/v1/assets/create', VAN);
    const first = await post(company, '/v1/depreciation-runs/create', { period: '2026-12' });
    const key = newKey('dep');

    const second = await post(company, '/v1/depreciation-runs/create', { period: '2026-12' }, key);
    const replay = await post(company, '/v1/depreciation-runs/create', { period: '2026-12' }, key);

    expect(second.status).toBe(409);
    expect(second.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(second.body).toMatchObject({ code: 'depreciation_already_run', existingRunId: first.body.id });
    expect(replay.status).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(second.text);
  });

  it('concurrent runs of one period under different keys: one 201, every other answer names it', async () => {
    const company = await t.newCompany();
    await post(company, '/v1/assets/create', VAN);

    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post(company, '/v1/depreciation-runs/create', { period: '2027-01' })),
    );

    const created = answers.filter((answer) => answer.status === 201);
    expect(created).toHaveLength(1);
    for (const answer of answers.filter((a) => a.status !== 201)) {
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({
        code: 'depreciation_already_run',
        existingRunId: created[0].body.id,
      });
    }
    const entries = await t.http.get('/v1/ledger/entries').set(company.auth);
    expect(entries.body.data).toHaveLength(1);
  });

  it.each([
    ['/v1/assets/create', { ...VAN, residualValue: 2_400_000 }, 'residualValue'],
    ['/v1/assets/create', { ...VAN, usefulLifeMonths: 0 }, 'usefulLifeMonths'],
    ['/v1/assets/create', { ...VAN, startMonth: '2026-13' }, 'startMonth'],
    ['/v1/assets/create', { ...VAN, cost: '2400000' }, 'cost'],
    ['/v1/depreciation-runs/create', { period: '2026-11-01' }, 'period'],
    ['/v1/depreciation-runs/create', {}, 'period'],
  ])('%s with a bad body (%#) → 400 validation_failed naming the field', async (path, body, field) => {
    const company = await t.newCompany();
    const response = await post(company, path, body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect((response.body.errors as Array<{ field: string }>).map((error) => error.field)).toContain(field);
  });

  it('an asset starting in a depreciated period → 422 asset_period_closed', async () => {
    const company = await t.newCompany();
    expect((await post(company, '/v1/depreciation-runs/create', { period: '2026-11' })).status).toBe(201);

    const response = await post(company, '/v1/assets/create', VAN);

    expect(response.status).toBe(422);
    expect(response.body.code).toBe('asset_period_closed');
  });

  it("another company's asset or run is not found", async () => {
    const owner = await t.newCompany();
    const other = await t.newCompany();
    const asset = await post(owner, '/v1/assets/create', VAN);
    const run = await post(owner, '/v1/depreciation-runs/create', { period: '2026-11' });

    expect((await t.http.get(`/v1/assets/${asset.body.id}`).set(other.auth)).status).toBe(404);
    expect((await t.http.get(`/v1/depreciation-runs/${run.body.id}`).set(other.auth)).status).toBe(404);
  });
});
