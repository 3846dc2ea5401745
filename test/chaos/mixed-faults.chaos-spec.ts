import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import {
  LedgerkeyApiError,
  LedgerkeyClient,
  LedgerkeyConnectionError,
  PaymentStillProcessingError,
  type CreatePaymentDto,
  type CreateResult,
  type IssueCreditNoteDto,
  type IssueInvoiceDto,
  type RecordPurchaseInvoiceDto,
  type RecordSettlementDto,
} from '../../libs/sdk/src';
import { freePort, startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import { startChaosDatabase, type ChaosDatabase } from '../support/chaos-database';
import { ChaosTimeline, type InjectedFault, type RecordedAttempt } from '../support/chaos-timeline';
import { anInvoice, newKey } from '../support/invoice.builder';
import { paymentEnv } from '../support/payment-books';
import { SandboxHttp, sandboxDataDir, startTestSandbox, stopAllSandboxes } from '../support/provider-sandbox';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { aSettlement } from '../support/settlement.builder';
import type { TestCompany } from '../support/test-app';
import { TEST_SECRETS_KEY } from '../support/test-secrets';
import { WebhookReceiver } from '../support/webhook-receiver';
import { startWorkerProcess, stopAllWorkerProcesses, type WorkerProcess } from '../support/worker-process';

const COMPANIES = 4;
const API_PROCESSES = 2;
/** Base invoices per company that credit notes and settlements draw on: gross 1 210 000 each. */
const BASE_INVOICES = 4;
/** Logical operations in flight at once. */
const LANES = 8;
/** Every third operation is sent to both API processes at once, with the same key and body. */
const DUAL_EVERY = 3;
/** How long after a fault's recovery a 5xx is still blamed on it. */
const GRACE_MS = 5_000;
const POSTGRES_DOWN_MS = 1_500;
const WEBHOOK_WAIT_MS = 100_000;
const SETUP_TIMEOUT_MS = 120_000;
const TEST_TIMEOUT_MS = 240_000;
/**
 * The provider sandbox's random fault mix (on top of the magic payment methods): a quarter of the
 * charge requests fail, hang past ledgerkey's provider timeout, or charge and lose the answer.
 */
const PROVIDER_FAULTS = 'error=0.1,timeout=0.05,lost_response=0.1';
const SANDBOX_DOWN_MS = 1_000;
/** How long the suite waits for the recovery to leave no payment `processing`. */
const PAYMENTS_SETTLE_WAIT_MS = 60_000;
/** Payment methods of the payments, by their ordinal mod 10 (the rest pm_card_visa). */
const PAYMENT_METHODS: Record<number, string> = {
  0: 'pm_card_declined',
  3: 'pm_card_lost_response',
  7: 'pm_card_timeout',
};

const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1,2,2,5',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_LEASE_SECONDS: '3',
  WEBHOOK_SWEEP_INTERVAL_MS: '500',
};

const KINDS = ['invoice', 'credit_note', 'settlement', 'purchase_invoice', 'payment'] as const;
type Kind = (typeof KINDS)[number];

const TABLE: Record<Kind, string> = {
  invoice: 'invoices',
  credit_note: 'credit_notes',
  settlement: 'settlements',
  purchase_invoice: 'purchase_invoices',
  payment: 'payments',
};

interface ChaosCompany extends TestCompany {
  index: number;
  /** One SDK client per API process: `clients[n]` talks to `api<n>` only. */
  clients: LedgerkeyClient[];
  baseInvoices: string[];
  webhookPath: string;
  webhookSecret: string;
}

/** One client's call of a logical operation (a dual operation has two). */
interface Call {
  target: string;
  status?: number;
  id?: string;
  replayed?: boolean;
  attempts: number;
  error?: string;
  /** A payment's final status as its client was told. */
  paymentStatus?: string;
}

interface LogicalOperation {
  kind: Kind;
  company: ChaosCompany;
  key: string;
  body: Record<string, unknown>;
  dual: boolean;
  calls: Call[];
}

/**
 * Chaos: two API processes and one worker on one PostgreSQL of the suite's own, and the provider
 * sandbox with a random fault mix, under a steady load of retrying SDK clients (four companies,
 * every document type and payments, same-key requests sent to both APIs at once), while the APIs
 * are SIGKILLed and restarted, the worker is SIGKILLed and restarted, the sandbox is SIGKILLed and
 * restarted on its data dir, and PostgreSQL itself is restarted under the running processes.
 * Afterwards the books must be exactly right, the provider's charges and the local payments must
 * agree one to one, no payment may stay `processing`, every event must have reached its webhook,
 * and no 5xx may have been answered outside a fault window. Run with `npm run test:chaos`
 * (builds first).
 */
describe('chaos: kills and a database restart under mixed load', () => {
  const timeline = new ChaosTimeline();
  const abortLoad = new AbortController();
  let database: ChaosDatabase;
  let receiver: WebhookReceiver;
  let ports: number[];
  const apis: ApiProcess[] = [];
  let worker: WorkerProcess;
  let sandbox: RunningProviderSandbox;
  let sandboxPort: number;
  let sandboxDir: string;
  const sandboxSeed = Number(process.env.CHAOS_SANDBOX_SEED ?? Math.floor(Math.random() * 2 ** 32));
  let restarts = { api: 0, worker: 0, sandbox: 0 };
  /** Output of processes that were killed, for failure messages. */
  const deadOutput: string[] = [];

  const processEnv = (): Record<string, string> => ({
    DATABASE_URL: database.url,
    RUN_WORKER: 'false',
    LOG_LEVEL: 'warn',
    // Every API and worker process seals and opens webhook secrets with this one key.
    SECRETS_KEY: TEST_SECRETS_KEY,
    ...WEBHOOK_ENV,
    // One URL for the whole run: the sandbox restarts on the same port and data dir.
    ...paymentEnv(sandbox),
    // Client retries count too; the recovery must outlast the sandbox's down time and the fault mix.
    PAYMENT_RECOVERY_MAX_ATTEMPTS: '50',
  });
  const startApi = async (slot: number): Promise<ApiProcess> => {
    apis[slot] = await startApiProcess({ env: { ...processEnv(), PORT: String(ports[slot]) } });
    return apis[slot];
  };
  const startWorker = async (): Promise<WorkerProcess> => {
    worker = await startWorkerProcess({ ...processEnv(), WORKER_CONCURRENCY: '4' });
    return worker;
  };

  /** The sandbox, on the suite's port and data dir: its state survives each of its kills. */
  const startSandbox = async (): Promise<RunningProviderSandbox> => {
    sandbox = await startTestSandbox({
      dataDir: sandboxDir,
      port: sandboxPort,
      faults: PROVIDER_FAULTS,
      seed: sandboxSeed,
    });
    return sandbox;
  };

  beforeAll(async () => {
    database = await startChaosDatabase();
    sandboxPort = await freePort();
    sandboxDir = await sandboxDataDir();
    await startSandbox();
    receiver = await WebhookReceiver.start();
    ports = await Promise.all(Array.from({ length: API_PROCESSES }, () => freePort()));
    for (let slot = 0; slot < API_PROCESSES; slot += 1) await startApi(slot);
    await startWorker();
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await stopAllWorkerProcesses();
    await stopAllApiProcesses();
    await stopAllSandboxes();
    await receiver?.close();
    await database?.destroy();
  }, SETUP_TIMEOUT_MS);

  it(
    'one document per logical operation, gapless numbers, balanced books, every event delivered, no unexcused 5xx',
    async () => {
      const runStartedAt = Date.now();
      const operations: LogicalOperation[] = [];
      const companies = await setUpCompanies(operations);

      // The load: lanes run logical operations until the fault schedule has finished.
      let loadRunning = true;
      let sequence = 0;
      const lane = async (): Promise<void> => {
        while (loadRunning) {
          const operation = nextOperation(companies, sequence);
          sequence += 1;
          operations.push(operation);
          await perform(operation);
        }
      };
      const loadStartedAt = Date.now();
      const lanes = Promise.all(Array.from({ length: LANES }, lane));
      let faults: InjectedFault[];
      try {
        faults = await injectFaults();
      } catch (error) {
        // A fault that did not recover fails the test; the clients stop instead of retrying on.
        abortLoad.abort(error);
        await lanes.catch(() => undefined);
        throw error;
      }
      loadRunning = false;
      await lanes;
      const loadEndedAt = Date.now();

      const db = new Pool({ connectionString: database.url, max: 4 });
      try {
        const companyIds = companies.map((company) => company.companyId);
        // The recovery leaves no payment processing (bounded wait; every client already got its outcome).
        const processingLeft = await stillProcessing(db, companyIds);
        const { rows: eventRows } = await db.query<{ id: string; company_id: string; object_id: string }>(
          `SELECT id, company_id, data -> 'object' ->> 'id' AS object_id FROM events WHERE company_id = ANY($1)`,
          [companyIds],
        );
        const eventIds = eventRows.map((row) => row.id);

        // Every event reaches its company's endpoint at least once (bounded wait).
        const drainStartedAt = Date.now();
        const expected = new Set(eventIds);
        const deliveredIds = (): Set<string> =>
          new Set(receiver.requests.map((request) => request.headers['webhook-id']));
        const waitError = await receiver
          .waitFor(() => [...expected].every((id) => deliveredIds().has(id)), WEBHOOK_WAIT_MS)
          .then(() => undefined)
          .catch((error: unknown) => error);
        const drainEndedAt = Date.now();
        const deliveryStatuses = await settledDeliveryStatuses(db, companyIds);

        const received = new Map<string, number>();
        for (const request of receiver.requests) {
          const id = request.headers['webhook-id'];
          received.set(id, (received.get(id) ?? 0) + 1);
        }
        const fiveHundreds = timeline.fiveHundreds(GRACE_MS);
        printSummary({
          operations,
          faults,
          eventCount: eventIds.length,
          received,
          deliveryStatuses,
          fiveHundreds,
          webhooksMissing: waitError !== undefined,
          processingLeft,
          durations: {
            total: Date.now() - runStartedAt,
            load: loadEndedAt - loadStartedAt,
            drain: drainEndedAt - drainStartedAt,
          },
        });

        // Every client got its final answer: the clients rode out every fault.
        expect(operations.flatMap((op) => op.calls.filter((call) => call.error !== undefined))).toEqual([]);
        expect(operations.flatMap((op) => op.calls.filter((call) => call.status !== 201))).toEqual([]);
        // Both calls of a dual operation were told of one document, executed at most once.
        for (const op of operations) {
          expect(new Set(op.calls.map((call) => call.id)).size).toBe(1);
          expect(op.calls.filter((call) => !call.replayed).length).toBeLessThanOrEqual(1);
        }

        // Exactly one document per logical operation, and it is the one its clients were told.
        for (const kind of KINDS) {
          const { rows } = await db.query<{ id: string; company_id: string }>(
            `SELECT id, company_id FROM ${TABLE[kind]} WHERE company_id = ANY($1)`,
            [companyIds],
          );
          const stored = rows.map((row) => `${row.company_id}/${row.id}`).sort();
          const told = operations
            .filter((op) => op.kind === kind)
            .map((op) => `${op.company.companyId}/${op.calls[0].id}`)
            .sort();
          expect({ kind, documents: stored }).toEqual({ kind, documents: told });
        }
        const { rows: records } = await db.query<{
          company_id: string;
          idempotency_key: string;
          body: string;
        }>(
          `SELECT company_id, idempotency_key, response_body AS body FROM idempotency_records
            WHERE company_id = ANY($1) AND response_status = 201
              -- Documents only: sealed answers (webhook endpoint creates) hold a secret, not a document.
              AND NOT response_sealed`,
          [companyIds],
        );
        const storedIds = new Map(
          records.map((row) => [
            `${row.company_id}/${row.idempotency_key}`,
            (JSON.parse(row.body) as { id: string }).id,
          ]),
        );
        expect(
          operations.filter((op) => storedIds.get(`${op.company.companyId}/${op.key}`) !== op.calls[0].id),
        ).toEqual([]);

        // Gapless numbers per (company, series).
        const { rows: series } = await db.query<{ company_id: string; series: string; gapless: boolean }>(
          `SELECT company_id, series, count(*) = max(sequence) AND min(sequence) = 1 AS gapless
             FROM (SELECT company_id, series, sequence FROM invoices WHERE company_id = ANY($1)
                   UNION ALL SELECT company_id, series, sequence FROM credit_notes WHERE company_id = ANY($1)) d
            GROUP BY company_id, series`,
          [companyIds],
        );
        expect(series.length).toBe(COMPANIES * 2);
        expect(series.filter((row) => !row.gapless)).toEqual([]);

        // Running totals equal the sums of credit notes, and of allocations and succeeded payments.
        const { rows: drift } = await db.query(
          `SELECT id, credited_total, paid_total FROM invoices i WHERE company_id = ANY($1)
              AND (credited_total <> (SELECT coalesce(sum(gross_total), 0) FROM credit_notes c WHERE c.invoice_id = i.id)
                   OR paid_total <> (SELECT coalesce(sum(amount), 0) FROM settlement_allocations a WHERE a.invoice_id = i.id)
                                  + (SELECT coalesce(sum(amount), 0) FROM payments p
                                      WHERE p.company_id = i.company_id AND p.invoice_id = i.id AND p.status = 'succeeded'))`,
          [companyIds],
        );
        expect(drift).toEqual([]);

        // Payments: none processing; each as its clients were told; one to one with the provider's charges.
        expect(processingLeft).toEqual([]);
        await expectPaymentsMatchProvider(db, companies, operations);

        // One balanced journal entry per document (a declined payment has none); balanced per
        // company and currency, in the database and in the API's trial balance.
        const { rows: entries } = await db.query<{ company_id: string; entries: number }>(
          `SELECT company_id, count(*)::int AS entries FROM journal_entries WHERE company_id = ANY($1) GROUP BY company_id`,
          [companyIds],
        );
        for (const company of companies) {
          const documents = operations.filter(
            (op) => op.company === company && op.calls[0].paymentStatus !== 'failed',
          ).length;
          expect(entries.find((row) => row.company_id === company.companyId)?.entries).toBe(documents);
        }
        const { rows: unbalancedEntries } = await db.query(
          `SELECT l.entry_id FROM journal_lines l WHERE l.company_id = ANY($1)
            GROUP BY l.entry_id HAVING sum(l.debit) <> sum(l.credit)`,
          [companyIds],
        );
        expect(unbalancedEntries).toEqual([]);
        const { rows: sums } = await db.query<{
          company_id: string;
          currency: string;
          debit: string;
          credit: string;
        }>(
          `SELECT e.company_id, e.currency, sum(l.debit)::text AS debit, sum(l.credit)::text AS credit
             FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
            WHERE e.company_id = ANY($1) GROUP BY e.company_id, e.currency`,
          [companyIds],
        );
        for (const company of companies) {
          const mine = sums.filter((row) => row.company_id === company.companyId);
          expect(mine.map((row) => row.currency)).toEqual(['EUR']);
          expect(mine[0].debit).toBe(mine[0].credit);
          const trialBalance = await company.clients[0].ledger.trialBalance();
          expect(trialBalance.totals).toEqual([
            {
              currency: 'EUR',
              debitTotal: mine[0].debit,
              creditTotal: mine[0].credit,
              balanced: true,
            },
          ]);
        }

        // One event per document, naming it; the API lists exactly the stored events.
        const documentIds = operations.map((op) => `${op.company.companyId}/${op.calls[0].id}`).sort();
        expect(eventRows.map((row) => `${row.company_id}/${row.object_id}`).sort()).toEqual(documentIds);
        for (const company of companies) {
          const listed = await listEventIds(company);
          const stored = eventRows.filter((row) => row.company_id === company.companyId).map((row) => row.id);
          expect(listed.sort()).toEqual(stored.sort());
        }

        // Every event delivered at least once, to its own company's endpoint, correctly signed.
        expect(waitError).toBeUndefined();
        const companyOfEvent = new Map(eventRows.map((row) => [row.id, row.company_id]));
        for (const request of receiver.requests) {
          const eventId = request.headers['webhook-id'];
          const company = companies.find((candidate) => candidate.companyId === companyOfEvent.get(eventId));
          expect(company).toBeDefined();
          expect(request.path).toBe(company!.webhookPath);
          expect(new Webhook(company!.webhookSecret).verify(request.body, request.headers)).toMatchObject({
            id: eventId,
          });
        }
        expect(deliveryStatuses).toEqual({ delivered: eventIds.length });

        // No 5xx outside a fault window, and inside one only the retryable "database unreachable"
        // answer (a 500 means an unexpected error, even during a fault); the faults all happened.
        expect(fiveHundreds.outside).toEqual([]);
        expect(fiveHundreds.inside.filter((attempt) => attempt.code !== 'service_unavailable')).toEqual([]);
        expect(faults.filter((fault) => fault.kind === 'api_kill').length).toBeGreaterThanOrEqual(3);
        expect(faults.filter((fault) => fault.kind === 'worker_kill')).toHaveLength(1);
        expect(faults.filter((fault) => fault.kind === 'postgres_restart')).toHaveLength(1);
        expect(faults.filter((fault) => fault.kind === 'sandbox_kill')).toHaveLength(2);
        expect(faults.every((fault) => fault.recoveredAt !== undefined)).toBe(true);
        // The processes that lived through the database restart are still the ones running.
        expect({ apis: apis.map((api) => api.running), worker: worker.running }).toEqual({
          apis: apis.map(() => true),
          worker: true,
        });
      } finally {
        await db.end();
      }
    },
    TEST_TIMEOUT_MS,
  );

  /**
   * Companies (through api0's admin API), a webhook endpoint each, and their base invoices,
   * which are added to `operations`.
   */
  async function setUpCompanies(operations: LogicalOperation[]): Promise<ChaosCompany[]> {
    return Promise.all(
      Array.from({ length: COMPANIES }, async (_, index): Promise<ChaosCompany> => {
        const tenant = await apis[0].newCompany();
        const clients = ports.map(
          (port, slot) =>
            new LedgerkeyClient({
              baseUrl: `http://127.0.0.1:${port}`,
              apiKey: tenant.apiKey,
              fetch: timeline.recordingFetch(`api${slot}`),
              // Rides out a restart of an API (a few seconds) or of PostgreSQL.
              retry: { maxAttempts: 80, baseDelayMs: 50, maxDelayMs: 800, maxRetryAfterMs: 5_000 },
              timeoutMs: 5_000,
            }),
        );
        const webhookPath = `/company-${index}`;
        const endpoint = await fetch(`${apis[0].baseUrl}/v1/webhook-endpoints/create`, {
          method: 'POST',
          headers: {
            ...tenant.auth,
            'Content-Type': 'application/json',
            'Idempotency-Key': newKey('endpoint'),
          },
          body: JSON.stringify({ url: receiver.url(webhookPath), enabledEvents: ['*'] }),
        });
        expect(endpoint.status).toBe(201);
        const { secret } = (await endpoint.json()) as { secret: string };
        const company: ChaosCompany = {
          ...tenant,
          index,
          clients,
          baseInvoices: [],
          webhookPath,
          webhookSecret: secret,
        };
        for (let n = 0; n < BASE_INVOICES; n += 1) {
          const base: LogicalOperation = {
            kind: 'invoice',
            company,
            key: newKey(`chaos-base-${index}-${n}`),
            body: anInvoice().withLine({ quantity: '1', unitPrice: 1_000_000, vatRate: '21' }).build(),
            dual: false,
            calls: [],
          };
          operations.push(base);
          base.calls = [await call(base, n % API_PROCESSES)];
          expect(base.calls[0].status).toBe(201);
          company.baseInvoices.push(base.calls[0].id as string);
        }
        return company;
      }),
    );
  }

  /** The fault schedule; resolves when every injected fault has recovered. */
  async function injectFaults(): Promise<InjectedFault[]> {
    await sleep(1_500);
    // The worker first: a fan-out job it held locked is requeued by the sweep after a minute.
    await killWorker();
    await sleep(2_000);
    await killApi(0);
    await sleep(1_500);
    await killSandbox();
    await sleep(2_000);
    await killApi(1);
    await sleep(2_000);
    await restartPostgres();
    await sleep(3_000);
    await killApi(0);
    await sleep(1_500);
    await killSandbox();
    await sleep(2_000);
    await killApi(1);
    await sleep(2_500);
    return timeline.faults;
  }

  /**
   * SIGKILLs the provider sandbox (a charge it was holding is never made; one it answered is
   * fsynced) and starts it again on the same port and data dir after a while without it.
   */
  async function killSandbox(): Promise<void> {
    const fault = timeline.begin('sandbox_kill', 'sandbox');
    const victim = sandbox;
    expect(await victim.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    deadOutput.push(`--- sandbox (pid ${victim.pid}) ---\n${victim.output()}`);
    await sleep(SANDBOX_DOWN_MS);
    await startSandbox();
    restarts = { ...restarts, sandbox: restarts.sandbox + 1 };
    timeline.recovered(fault);
  }

  async function killApi(slot: number): Promise<void> {
    const fault = timeline.begin('api_kill', `api${slot}`);
    const victim = apis[slot];
    expect(await victim.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    deadOutput.push(`--- api${slot} (pid ${victim.pid}) ---\n${victim.output()}`);
    await startApi(slot);
    restarts = { ...restarts, api: restarts.api + 1 };
    timeline.recovered(fault);
  }

  async function killWorker(): Promise<void> {
    const fault = timeline.begin('worker_kill', 'worker');
    const victim = worker;
    expect(await victim.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    deadOutput.push(`--- worker (pid ${victim.pid}) ---\n${victim.output()}`);
    await sleep(500);
    await startWorker();
    restarts = { ...restarts, worker: restarts.worker + 1 };
    timeline.recovered(fault);
  }

  /**
   * Stops and starts PostgreSQL under the running processes, which must recover on their own:
   * the same API processes answer ready again, and the same worker keeps running.
   */
  async function restartPostgres(): Promise<void> {
    const survivors: Array<ApiProcess | WorkerProcess> = [...apis, worker];
    const fault = timeline.begin('postgres_restart', 'postgres');
    await database.stop();
    await sleep(POSTGRES_DOWN_MS);
    await database.start();
    await Promise.all(apis.map((api) => untilReady(api)));
    timeline.recovered(fault);
    expect(survivors.map((survivor) => survivor.running)).toEqual(survivors.map(() => true));
  }

  async function untilReady(api: ApiProcess): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const status = await fetch(`${api.baseUrl}/health/ready`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`${api.baseUrl} not ready 20 s after the database restart`);
      await sleep(100);
    }
  }

  function nextOperation(companies: ChaosCompany[], index: number): LogicalOperation {
    const company = companies[index % COMPANIES];
    const kind = KINDS[Math.floor(index / COMPANIES) % KINDS.length];
    const target = company.baseInvoices[Math.floor(Math.random() * company.baseInvoices.length)];
    const tag = `${index}-${randomUUID().slice(0, 8)}`;
    let body: Record<string, unknown>;
    switch (kind) {
      case 'invoice':
        body = anInvoice()
          .withOrderId(`chaos-order-${tag}`)
          .withLine({ unitPrice: 100 + (index % 900) })
          .build();
        break;
      case 'credit_note':
        body = {
          invoiceId: target,
          reason: 'other',
          lines: [{ description: `partial ${tag}`, quantity: '1', unitPrice: 100, vatRate: '21' }],
        };
        break;
      case 'settlement':
        body = aSettlement().forPayout(`po_chaos_${tag}`).withFee(10).allocating(target, 1_000).build();
        break;
      case 'purchase_invoice':
        body = aPurchaseInvoice()
          .withSupplier({ name: `Supplier ${tag}`, countryCode: 'LT' })
          .withLine({ quantity: '1', unitPrice: 2_000 + (index % 900) })
          .build();
        break;
      case 'payment':
        body = {
          invoiceId: target,
          amount: 500 + (index % 400),
          // By the payment's own ordinal (operation kinds rotate per COMPANIES operations).
          paymentMethod:
            PAYMENT_METHODS[
              (Math.floor(index / (COMPANIES * KINDS.length)) * COMPANIES + (index % COMPANIES)) % 10
            ] ?? 'pm_card_visa',
        };
        break;
    }
    return { kind, company, key: `chaos-${kind}-${tag}`, body, dual: index % DUAL_EVERY === 0, calls: [] };
  }

  /** Runs a logical operation: through one API, or through both at once with the same key. */
  async function perform(operation: LogicalOperation): Promise<void> {
    const slots = operation.dual ? [0, 1] : [Math.floor(Math.random() * API_PROCESSES)];
    operation.calls = await Promise.all(slots.map((slot) => call(operation, slot)));
  }

  async function call(operation: LogicalOperation, slot: number): Promise<Call> {
    const client = operation.company.clients[slot];
    const options = { idempotencyKey: operation.key, signal: abortLoad.signal };
    const target = `api${slot}`;
    try {
      let result: CreateResult<{ id: string }>;
      switch (operation.kind) {
        case 'invoice':
          result = await client.salesInvoices.create(operation.body as unknown as IssueInvoiceDto, options);
          break;
        case 'credit_note':
          result = await client.creditNotes.create(operation.body as unknown as IssueCreditNoteDto, options);
          break;
        case 'settlement':
          result = await client.settlements.create(operation.body as unknown as RecordSettlementDto, options);
          break;
        case 'purchase_invoice':
          result = await client.purchaseInvoices.create(
            operation.body as unknown as RecordPurchaseInvoiceDto,
            options,
          );
          break;
        case 'payment': {
          // Same key until the outcome is known: a 202 (provider fault, sandbox down) is re-sent.
          const paid = await client.payments.createAndWait(operation.body as unknown as CreatePaymentDto, {
            ...options,
            maxWaitMs: 90_000,
            pollIntervalMs: 200,
            maxPollIntervalMs: 2_000,
          });
          return {
            target,
            status: paid.status,
            id: paid.data.id,
            replayed: paid.replayed,
            attempts: paid.attempts,
            paymentStatus: paid.data.status,
          };
        }
      }
      return {
        target,
        status: result.status,
        id: result.data.id,
        replayed: result.replayed,
        attempts: result.attempts,
      };
    } catch (error) {
      if (
        error instanceof LedgerkeyApiError ||
        error instanceof LedgerkeyConnectionError ||
        error instanceof PaymentStillProcessingError
      ) {
        return { target, attempts: error.attempts, error: `${error.name}: ${error.message}` };
      }
      throw error;
    }
  }

  /**
   * For every logical payment: one local payment (the one its clients were told, with the status
   * they were told), and at the provider exactly the charges its outcome implies, matched by
   * `providerReference` — succeeded: one succeeded charge of its amount, the payment's
   * `providerChargeId`; failed with a charge id (a decline): that one failed charge; failed without
   * one (a refusal): none. No charge at the provider without its local payment, and each succeeded
   * payment has exactly one journal entry of its amount.
   */
  async function expectPaymentsMatchProvider(
    db: Pool,
    companies: ChaosCompany[],
    operations: LogicalOperation[],
  ): Promise<void> {
    const provider = new SandboxHttp(sandbox);
    const charges: Array<{
      id: string;
      reference: string;
      amount: number;
      status: string;
      metadata: { companyId?: string; paymentId?: string };
    }> = [];
    for (const company of companies) {
      let startingAfter: string | undefined;
      for (;;) {
        const query = `companyId=${company.companyId}&limit=1000${startingAfter ? `&startingAfter=${startingAfter}` : ''}`;
        const page = await provider.call('GET', `/v1/charges?${query}`);
        expect(page.status).toBe(200);
        charges.push(...page.body.data);
        if (!page.body.hasMore) break;
        startingAfter = page.body.data.at(-1).id;
      }
    }
    // Every charge the sandbox ever made (dropped ones included) is one of these companies'.
    const counters = (await provider.call('GET', '/_sandbox/counters')).body;
    expect(counters.charges.total).toBe(charges.length);

    const { rows: payments } = await db.query<{
      id: string;
      company_id: string;
      status: string;
      amount: string;
      provider_reference: string;
      provider_charge_id: string | null;
      entries: number;
      entry_amount: string | null;
    }>(
      `SELECT p.id, p.company_id, p.status, p.amount::text, p.provider_reference, p.provider_charge_id,
              (SELECT count(*)::int FROM journal_entries e
                WHERE e.company_id = p.company_id AND e.source_type = 'payment' AND e.source_id = p.id) AS entries,
              (SELECT sum(l.debit)::text FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
                WHERE e.company_id = p.company_id AND e.source_type = 'payment' AND e.source_id = p.id) AS entry_amount
         FROM payments p WHERE p.company_id = ANY($1)`,
      [companies.map((company) => company.companyId)],
    );
    const byReference = new Map<string, typeof charges>();
    for (const charge of charges)
      byReference.set(charge.reference, [...(byReference.get(charge.reference) ?? []), charge]);

    const told = new Map(
      operations
        .filter((op) => op.kind === 'payment')
        .map((op) => [`${op.company.companyId}/${op.calls[0].id}`, op.calls[0].paymentStatus]),
    );
    const mismatches: string[] = [];
    for (const payment of payments) {
      const mine = byReference.get(payment.provider_reference) ?? [];
      byReference.delete(payment.provider_reference);
      const expected =
        payment.status === 'succeeded'
          ? [`${payment.provider_charge_id} succeeded ${payment.amount}`]
          : payment.provider_charge_id === null
            ? []
            : [`${payment.provider_charge_id} failed ${payment.amount}`];
      const actual = mine.map((charge) => `${charge.id} ${charge.status} ${charge.amount}`);
      const entries = payment.status === 'succeeded' ? `1 × ${payment.amount}` : '0 × null';
      const ledger = `${payment.entries} × ${payment.entry_amount}`;
      const toldStatus = told.get(`${payment.company_id}/${payment.id}`);
      if (
        JSON.stringify(actual) !== JSON.stringify(expected) ||
        ledger !== entries ||
        toldStatus !== payment.status ||
        mine.some((charge) => charge.metadata.paymentId !== payment.id)
      ) {
        mismatches.push(
          `${payment.id} ${payment.status} (told ${toldStatus}): charges ${JSON.stringify(actual)}, ` +
            `expected ${JSON.stringify(expected)}; ledger ${ledger}, expected ${entries}`,
        );
      }
    }
    expect(mismatches).toEqual([]);
    // No charge at the provider without its local payment.
    expect([...byReference.keys()]).toEqual([]);
    expect(payments.length).toBe(told.size);
  }

  async function listEventIds(company: ChaosCompany): Promise<string[]> {
    const ids: string[] = [];
    for (;;) {
      const page = await company.clients[1].events.list({ limit: 100, startingAfter: ids.at(-1) });
      ids.push(...page.data.map((event) => event.id));
      if (!page.hasMore) return ids;
    }
  }

  function printSummary(report: {
    operations: LogicalOperation[];
    faults: InjectedFault[];
    eventCount: number;
    received: Map<string, number>;
    deliveryStatuses: Record<string, number>;
    fiveHundreds: { inside: RecordedAttempt[]; outside: RecordedAttempt[] };
    webhooksMissing: boolean;
    processingLeft: string[];
    durations: { total: number; load: number; drain: number };
  }): void {
    const { operations, faults, received, fiveHundreds } = report;
    const t0 = Math.min(...timeline.attempts.map((attempt) => attempt.startedAt));
    const seconds = (ms: number): string => (ms / 1000).toFixed(1);
    const rows: string[][] = [['kind', 'ops', 'dual', 'created', 'failed', 'calls', 'attempts', 'replayed']];
    for (const kind of [...KINDS, 'all'] as const) {
      const mine = operations.filter((op) => kind === 'all' || op.kind === kind);
      const calls = mine.flatMap((op) => op.calls);
      rows.push([
        kind,
        String(mine.length),
        String(mine.filter((op) => op.dual).length),
        String(mine.filter((op) => op.calls.every((c) => c.status === 201)).length),
        String(mine.filter((op) => op.calls.some((c) => c.error !== undefined)).length),
        String(calls.length),
        String(calls.reduce((sum, c) => sum + c.attempts, 0)),
        String(calls.filter((c) => c.replayed).length),
      ]);
    }
    const attempts = timeline.attempts;
    const count = (predicate: (attempt: RecordedAttempt) => boolean): number =>
      attempts.filter(predicate).length;
    const duplicates = [...received.values()].filter((n) => n > 1).length;
    const pairs = operations.filter((op) => op.dual);
    const lines = [
      '',
      '=== ledgerkey chaos summary ===',
      table(rows),
      '',
      table([
        ['attempts', 'total', '2xx', 'replayed', '409 in_use', '5xx in window', '5xx outside', 'no answer'],
        [
          'http',
          String(attempts.length),
          String(count((a) => a.status !== undefined && a.status < 300)),
          String(count((a) => a.replayed)),
          String(count((a) => a.code === 'idempotency_key_in_use')),
          String(fiveHundreds.inside.length),
          String(fiveHundreds.outside.length),
          String(count((a) => a.error !== undefined)),
        ],
      ]),
      '',
      table([
        ['fault', 'target', 'at (s)', 'recovered (s)', 'took (s)'],
        ...faults.map((fault) => [
          fault.kind,
          fault.target,
          seconds(fault.startedAt - t0),
          fault.recoveredAt === undefined ? '-' : seconds(fault.recoveredAt - t0),
          fault.recoveredAt === undefined ? '-' : seconds(fault.recoveredAt - fault.startedAt),
        ]),
      ]),
      `shared-key pairs: ${pairs.length}; one executed and one replayed: ${
        pairs.filter((op) => op.calls.filter((c) => c.replayed).length === 1).length
      }; both replayed (the executing answer was lost to a fault): ${
        pairs.filter((op) => op.calls.every((c) => c.replayed)).length
      }`,
      `kills: api ${faults.filter((f) => f.kind === 'api_kill').length}, worker ${faults.filter((f) => f.kind === 'worker_kill').length}, ` +
        `sandbox ${faults.filter((f) => f.kind === 'sandbox_kill').length}; ` +
        `restarts: api ${restarts.api}, worker ${restarts.worker}, sandbox ${restarts.sandbox}, postgres ${faults.filter((f) => f.kind === 'postgres_restart').length}`,
      `5xx codes: ${JSON.stringify(tally([...fiveHundreds.inside, ...fiveHundreds.outside].map((a) => `${a.status} ${a.code ?? '?'}`)))}`,
      `payments: ${JSON.stringify(tally(operations.filter((op) => op.kind === 'payment').map((op) => `${String(op.body.paymentMethod)} → ${op.calls[0]?.paymentStatus ?? 'error'}`)))}; ` +
        `202 answers: ${count((a) => a.status === 202)}; provider faults ${PROVIDER_FAULTS} (seed ${sandboxSeed}, CHAOS_SANDBOX_SEED)`,
      `events: ${report.eventCount}; received ${received.size} distinct in ${receiver.requests.length} requests; ` +
        `${duplicates} received more than once; deliveries ${JSON.stringify(report.deliveryStatuses)}`,
      `duration: total ${seconds(report.durations.total)} s, load ${seconds(report.durations.load)} s, ` +
        `webhook drain ${seconds(report.durations.drain)} s`,
    ];
    const failedCalls = operations.flatMap((op) => op.calls.filter((c) => c.error !== undefined));
    if (
      fiveHundreds.outside.length > 0 ||
      fiveHundreds.inside.some((attempt) => attempt.code !== 'service_unavailable') ||
      failedCalls.length > 0 ||
      report.webhooksMissing ||
      report.processingLeft.length > 0 ||
      !worker.running
    ) {
      lines.push('5xx outside fault windows:', ...fiveHundreds.outside.map((a) => JSON.stringify(a)));
      lines.push('failed calls:', ...failedCalls.map((c) => JSON.stringify(c)));
      lines.push(
        ...apis.map((api, slot) => `--- api${slot} (pid ${api.pid}) ---\n${api.output()}`),
        `--- worker (pid ${worker.pid}) ---\n${worker.output()}`,
        `--- sandbox (pid ${sandbox.pid}) ---\n${sandbox.output()}`,
        `payments still processing: ${report.processingLeft.join(', ')}`,
        ...deadOutput,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  }
});

/** Webhook deliveries of the companies by status, once none is pending any more (bounded wait). */
async function settledDeliveryStatuses(db: Pool, companyIds: string[]): Promise<Record<string, number>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await db.query<{ status: string; count: number }>(
      `SELECT status, count(*)::int AS count FROM webhook_deliveries WHERE company_id = ANY($1) GROUP BY status`,
      [companyIds],
    );
    const statuses = Object.fromEntries(rows.map((row) => [row.status, row.count]));
    if (statuses.pending === undefined || Date.now() > deadline) return statuses;
    await sleep(200);
  }
}

/** The companies' payments still `processing` once the recovery had its time (bounded wait). */
async function stillProcessing(db: Pool, companyIds: string[]): Promise<string[]> {
  const deadline = Date.now() + PAYMENTS_SETTLE_WAIT_MS;
  for (;;) {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM payments WHERE company_id = ANY($1) AND status = 'processing'`,
      [companyIds],
    );
    if (rows.length === 0 || Date.now() > deadline) return rows.map((row) => row.id);
    await sleep(200);
  }
}

function tally(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
        .join('  '),
    )
    .join('\n');
}
