import { anInvoice, newKey } from '../support/invoice.builder';
import { startRoundTripCounter, type RoundTripCounter } from '../support/round-trip-counter';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabaseUrl } from '../support/test-database';

/**
 * Round trips to PostgreSQL per request, counted on the wire (a proxy in front of the database),
 * so the design's cost is checked whatever the code that sends the statements: the create path
 * keeps its round trips low by construction, not by tuning.
 */
const CREATE = '/v1/sales/invoices/create';

let counter: RoundTripCounter;
let t: TestApp;
let company: TestCompany;

beforeAll(async () => {
  counter = await startRoundTripCounter(testDatabaseUrl(), 'ledgerkey-api');
  t = await startTestApp({ DATABASE_URL: counter.url });
  company = await t.newCompany();
  // Warm: the API key verified and kept, each statement prepared on the connection the next uses.
  for (let i = 0; i < 3; i += 1) await create(newKey(), JSON.stringify(anInvoice().withLine().build()));
});

afterAll(async () => {
  await t?.close();
  await counter?.close();
});

function create(key: string, bytes: string) {
  return t.http
    .post(CREATE)
    .set(company.auth)
    .set('Idempotency-Key', key)
    .set('Content-Type', 'application/json')
    .send(bytes);
}

/** The round trips `request` took, and its status. */
async function measured(request: () => PromiseLike<{ status: number }>): Promise<[number, number]> {
  counter.reset();
  const { status } = await request();
  return [status, counter.roundTrips];
}

it('a create: BEGIN with the key claim, the invoice, then its entry, event and record with COMMIT', async () => {
  const [status, roundTrips] = await measured(() =>
    create(newKey(), JSON.stringify(anInvoice().withLine().build())),
  );
  expect([status, roundTrips]).toEqual([201, 3]);
});

it('a replay of the same bytes: from the replay cache, no round trip', async () => {
  const key = newKey();
  const bytes = JSON.stringify(anInvoice().withLine().build());
  await create(key, bytes);
  expect(await measured(() => create(key, bytes))).toEqual([201, 0]);
});

it('a replay of other bytes of the same payload: BEGIN with the claim, which finds the record; COMMIT', async () => {
  const key = newKey();
  const bytes = JSON.stringify(anInvoice().withLine().build());
  await create(key, bytes);
  expect(await measured(() => create(key, ` ${bytes}`))).toEqual([201, 2]);
});
