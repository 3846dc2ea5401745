import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
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
  // Deep linking re-opens the operation after a reload; only a closed one needs a click.
  if (!(await operation.locator('.opblock-body').isVisible())) {
    await operation.locator('.opblock-summary').first().click();
  }
  await tryOut.click();
  const keyInput = operation.locator('tr[data-param-name="Idempotency-Key"] input');
  await keyInput.waitFor();
  return { idempotencyKey: await keyInput.inputValue() };
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

  it('authorizes once (kept across reloads), pre-fills a fresh Idempotency-Key and issues an invoice: 201', async () => {
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    await page.locator(CREATE_OPERATION).waitFor();

    // Authorize with the company key (the "bearer" scheme, not the admin one).
    await page.locator('.auth-wrapper button.authorize').click();
    const bearer = page.locator('.auth-container').filter({ hasText: 'Your company API key' });
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
    expect(JSON.parse(await body.inputValue())).toMatchObject({
      customer: { name: 'UAB Pirkėjas', countryCode: 'LT' },
      lines: [expect.objectContaining({ quantity: '2', unitPrice: 5000 })],
    });
    // The key stays editable: the user may type their own.
    const keyInput = operation.locator('tr[data-param-name="Idempotency-Key"] input');
    await keyInput.fill('swagger-ui-order-1041-invoice');

    await operation.locator('button.execute').click();
    const liveResponse = operation.locator('.live-responses-table tr.response').first();
    const status = liveResponse.locator('.response-col_status');
    await status.waitFor();
    expect((await status.innerText()).trim()).toMatch(/^201/);
    const responseBody = JSON.parse(
      await liveResponse.locator('.highlight-code pre').first().innerText(),
    ) as {
      id: string;
      number: string;
    };
    expect(responseBody.number).toBe('INV-000001');

    mkdirSync(ARTIFACTS, { recursive: true });
    // The request as sent (curl, with both headers) and the 201 below it.
    await operation.locator('.curl-command').evaluate((element) => element.scrollIntoView());
    await page.screenshot({ path: SCREENSHOT });

    // The invoice exists once, under the key typed in the UI.
    const stored = await t.http.get(`/v1/sales/invoices/${responseBody.id}`).set(company.auth);
    expect(stored.status).toBe(200);
    const replay = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', 'swagger-ui-order-1041-invoice')
      .send(JSON.parse(await body.inputValue()) as object);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((replay.body as { id: string }).id).toBe(responseBody.id);

    // Everything the page loaded came from this server: no CDN.
    const origins = new Set(requestedUrls.map((url) => new URL(url).origin));
    expect([...origins]).toEqual([new URL(t.baseUrl).origin]);
  }, 90_000);
});
