import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';

/** Debian's package; Playwright never downloads a browser here. `.ci/run` installs it. */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = resolve(__dirname, '../../test-artifacts');
const SCREENSHOT = join(ARTIFACTS, 'swagger-ui-create-sales-invoice.png');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const CREATE_OPERATION = '#operations-Sales_invoices-createSalesInvoice';

const available = existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') {
  throw new Error(`${CHROMIUM} is missing: CI must install it (apt-get install -y chromium), see .ci/run`);
}
if (!available) {
  process.stdout.write(
    `swagger-ui.e2e-spec: SKIPPED, ${CHROMIUM} not found (install it with: apt-get install -y chromium)\n`,
  );
}
const describeInBrowser = available ? describe : describe.skip;

async function openCreateInvoice(page: Page): Promise<{ idempotencyKey: string }> {
  const operation = page.locator(CREATE_OPERATION);
  const tryOut = operation.locator('button.try-out__btn');
  // Deep linking re-opens the operation named in the URL's hash after a reload, some time after
  // the page loads, and a click on the summary toggles it: click only while it is closed, until
  // "Try it out" shows (a click racing the deep link closes it, and the next round opens it).
  await operation.waitFor();
  await eventually(
    async () => {
      if (await tryOut.isVisible()) return true;
      if (!(await operation.evaluate((node) => node.classList.contains('is-open')))) {
        await operation.locator('.opblock-summary').first().click();
      }
      return false;
    },
    (visible) => visible,
  );
  // Visible, so no actionability wait: once under CI load the click sat 30 s in "waiting for
  // element to be visible, enabled and stable" after a reload (the deep link scrolls to the
  // operation). If the click does nothing, the key's input below never shows and this fails.
  await tryOut.click({ force: true });
  const keyInput = operation.locator('tr[data-param-name="Idempotency-Key"] input');
  await keyInput.waitFor();
  return { idempotencyKey: await keyInput.inputValue() };
}

/** Clicks Execute and waits for that request's answer in the UI; returns its JSON body. */
async function execute(page: Page, operation: Locator, status: number): Promise<Record<string, unknown>> {
  const answered = page.waitForResponse(
    (response) =>
      response.request().method() === 'POST' && response.url().endsWith('/v1/sales/invoices/create'),
  );
  // No actionability wait, as for "Try it out" and "New key": a CI run sat 30 s in "waiting for
  // element to be … stable" on this visible button. The answer awaited next proves the click.
  await operation.locator('button.execute').click({ force: true });
  const response = await answered;
  expect(response.status()).toBe(status);
  const text = await response.text();
  const live = operation.locator('.live-responses-table tr.response').first();
  // The UI shows this answer (its body: every answer has its own request id), not the previous one.
  const shown = await eventually(
    async () => ({
      status: (await live.locator('.response-col_status').innerText()).trim().slice(0, 3),
      body: await live.locator('.highlight-code pre').first().innerText(),
    }),
    // The UI pretty-prints the body: compare the JSON, not the text.
    (value) => sameJson(value.body, text),
  );
  expect({ status: shown.status, body: JSON.parse(shown.body) as unknown }).toEqual({
    status: String(status),
    body: JSON.parse(text),
  });
  return JSON.parse(text) as Record<string, unknown>;
}

function sameJson(a: string, b: string): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(a), JSON.parse(b));
  } catch {
    return false; // not (yet) the whole body
  }
}

/** Reads until `done` holds or 10 s pass, and returns the last value read (the caller asserts on it). */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && done(value)) return value;
    if (Date.now() > deadline) return value ?? read();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describeInBrowser(`Swagger UI in Chromium (${CHROMIUM})`, () => {
  let t: TestApp;
  let company: TestCompany;
  let context: BrowserContext;
  let userDataDir: string;
  const requestedUrls: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    company = await t.newCompany();
    userDataDir = mkdtempSync(join(tmpdir(), 'ledgerkey-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1280, height: 1200 },
    });
    context.on('request', (request) => requestedUrls.push(request.url()));
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await t?.close();
  });

  it('authorizes once (kept across reloads), pre-fills a fresh key, "New key", a replay banner and the hints after a stored rejection', async () => {
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    await page.locator(CREATE_OPERATION).waitFor();

    // Authorize with the company key (the "bearer" scheme, not the admin one).
    await page.locator('.auth-wrapper button.authorize').click();
    const bearer = page.locator('.auth-container').filter({ hasText: 'Your company API key' });
    // Finance users see their scheme only: the operators' (ADMIN_API_TOKEN) is in /docs/operator.
    expect(await page.locator('.auth-container').count()).toBe(1);
    expect(await page.locator('#operations-tag-Admin, #operations-tag-Operations').count()).toBe(0);
    await bearer.locator('input').fill(company.apiKey);
    await bearer.locator('button.authorize').click();
    await bearer.locator('button.btn-done').click();
    const firstLoad = await openCreateInvoice(page);
    expect(firstLoad.idempotencyKey).toMatch(UUID);

    // A reload keeps the authorization (local storage) and pre-fills another fresh key.
    await page.reload();
    await page.locator(CREATE_OPERATION).waitFor();
    expect(await page.evaluate(() => localStorage.getItem('authorized'))).toContain(company.apiKey);
    const secondLoad = await openCreateInvoice(page);
    expect(secondLoad.idempotencyKey).toMatch(UUID);
    expect(secondLoad.idempotencyKey).not.toBe(firstLoad.idempotencyKey);

    // The request body example renders, and is a valid invoice as it stands.
    const operation = page.locator(CREATE_OPERATION);
    const body = operation.locator('.body-param textarea');
    const example = JSON.parse(await body.inputValue()) as Record<string, unknown>;
    expect(example).toMatchObject({
      orderId: 'order-2001', // not the README's order-1041: both work on a fresh start
      customer: { name: 'UAB Pirkėjas', countryCode: 'LT' },
      lines: [expect.objectContaining({ quantity: '2', unitPrice: 5000 })],
    });

    // "New key" beside the field fills a fresh UUID; the key stays editable too.
    const keyInput = operation.locator('tr[data-param-name="Idempotency-Key"] input');
    const newKeyButton = operation.locator('tr[data-param-name="Idempotency-Key"] button.ledgerkey-new-key');
    await expect(newKeyButton.isVisible()).resolves.toBe(true);
    // Visible, so no actionability wait (as for "Try it out" above: a PostgreSQL 15 CI run sat
    // 30 s in "waiting for element to be … stable" here). Each click below is checked by what
    // follows it: the new key's value, or an answer that needs a new key.
    await newKeyButton.click({ force: true });
    const generated = await eventually(
      () => keyInput.inputValue(),
      (value) => value !== secondLoad.idempotencyKey,
    );
    expect(generated).toMatch(UUID);
    expect(generated).not.toBe(secondLoad.idempotencyKey);
    await keyInput.fill('swagger-ui-order-2001-invoice');

    const notice = operation.locator('.ledgerkey-notice');
    const first = await execute(page, operation, 201);
    expect(first.number).toBe('INV-000001');
    expect(await notice.count()).toBe(0);

    mkdirSync(ARTIFACTS, { recursive: true });
    // The request as sent (curl, with both headers) and the 201 below it.
    await operation.locator('.curl-command').evaluate((element) => element.scrollIntoView());
    await page.screenshot({ path: SCREENSHOT });

    // Execute again: the same answer, and the banner says it is a replay.
    const replayed = await execute(page, operation, 201);
    expect(replayed.id).toBe(first.id);
    expect(await operation.locator('.ledgerkey-notice--replay').innerText()).toMatch(
      /^Replayed: the stored answer of an earlier request with Idempotency-Key "swagger-ui-order-2001-invoice"\..*Nothing was created or charged again/s,
    );
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-replay-banner.png') });

    // The body changed under the same key: 422, and the UI says what to do.
    const changed = {
      ...example,
      lines: [{ description: 'Consulting', quantity: '3', unitPrice: 5000, vatRate: '21' }],
    };
    await body.fill(JSON.stringify(changed, null, 2));
    const reused = await execute(page, operation, 422);
    expect(reused.code).toBe('idempotency_key_reused');
    expect(await operation.locator('.ledgerkey-notice--rejection').innerText()).toContain(
      'Changing the body needs a new key: press "New key"',
    );
    await page.screenshot({ path: join(ARTIFACTS, 'swagger-ui-key-reused-hint.png') });

    // A new key for the changed body: the order is invoiced already, a rejection stored under the
    // key; executing again replays it. Both times the UI says a corrected body needs a new key.
    await newKeyButton.click({ force: true });
    expect(
      await eventually(
        () => keyInput.inputValue(),
        (value) => UUID.test(value),
      ),
    ).toMatch(UUID);
    const rejected = await execute(page, operation, 409);
    expect(rejected).toMatchObject({ code: 'order_already_invoiced', existingInvoiceId: first.id });
    expect(await notice.innerText()).toMatch(
      /^This rejection is stored under Idempotency-Key "[0-9a-f-]{36}"\./,
    );
    expect(await notice.innerText()).toContain('Changing the body needs a new key');
    const rejectedAgain = await execute(page, operation, 409);
    expect(rejectedAgain.requestId).toBe(rejected.requestId); // the stored answer, byte for byte
    expect(await notice.innerText()).toMatch(
      /^Replayed: the stored answer .*Changing the body needs a new key/s,
    );

    // Corrected (another order) under a new key: a second invoice, no banner.
    await body.fill(JSON.stringify({ ...changed, orderId: 'order-2002' }, null, 2));
    await newKeyButton.click({ force: true });
    const second = await execute(page, operation, 201);
    expect(second.number).toBe('INV-000002');
    expect(await notice.count()).toBe(0);

    // The invoice exists once, under the key typed in the UI.
    const stored = await t.http.get(`/v1/sales/invoices/${first.id}`).set(company.auth);
    expect(stored.status).toBe(200);
    const replay = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', 'swagger-ui-order-2001-invoice')
      .send(example);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((replay.body as { id: string }).id).toBe(first.id);

    // Everything the page loaded came from this server: no CDN.
    const origins = new Set(requestedUrls.map((url) => new URL(url).origin));
    expect([...origins]).toEqual([new URL(t.baseUrl).origin]);
  }, 150_000);

  it('serves the operators their own UI at /docs/operator: companies, health probes, metrics', async () => {
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/docs/operator`);
    await page.locator('#operations-Admin-createCompany').waitFor();
    // (The selectors the customer UI's test finds nothing for.)
    expect(await page.locator('#operations-tag-Admin, #operations-tag-Operations').count()).toBe(2);
    expect(await page.locator('#operations-Operations-getMetrics').count()).toBe(1);
    expect(await page.locator('#operations-Operations-getReadiness').count()).toBe(1);
    expect(await page.locator('[id^="operations-Sales_invoices"]').count()).toBe(0);
    // Its create is idempotent too: the same key control.
    await page.locator('#operations-Admin-createCompany .opblock-summary').first().click();
    await page.locator('#operations-Admin-createCompany button.try-out__btn').click();
    await page.locator('#operations-Admin-createCompany button.ledgerkey-new-key').waitFor();
  }, 60_000);
});
