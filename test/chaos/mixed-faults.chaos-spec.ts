import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import { freePort, startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import { expectPaymentsMatchSandbox, settledDeliveryStatuses, stillProcessing } from '../support/chaos-books';
import { startChaosDatabase, type ChaosDatabase } from '../support/chaos-database';
import {
  chaosProcessEnv,
  ProcessKiller,
  restartPostgres as restartPostgresUnder,
} from '../support/chaos-processes';
import {
  API_PROCESSES,
  callOperation,
  COMPANIES,
  KINDS,
  listEventIds,
  nextOperation,
  setUpChaosCompanies,
  TABLE,
  type Call,
  type ChaosCompany,
  type LogicalOperation,
} from '../support/chaos-load';
import { printChaosSummary, type ChaosReport } from '../support/chaos-summary';
import { ChaosTimeline, type InjectedFault } from '../support/chaos-timeline';
import { sandboxDataDir, startTestSandbox, stopAllSandboxes } from '../support/provider-sandbox';
import { WebhookReceiver } from '../support/webhook-receiver';
import { startWorkerProcess, stopAllWorkerProcesses, type WorkerProcess } from '../support/worker-process';

/** Logical operations in flight at once. */
const LANES = 8;
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
  /** Kills the processes; counts their restarts and keeps their output for failure messages. */
  const killer = new ProcessKiller(timeline);

  // One sandbox URL for the whole run: the sandbox restarts on the same port and data dir.
  const processEnv = (): Record<string, string> => chaosProcessEnv(database, sandbox);
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

  const call = (operation: LogicalOperation, slot: number): Promise<Call> =>
    callOperation(operation, slot, abortLoad);

  /** Companies with a webhook endpoint and base invoices each (added to `operations`). */
  const setUpCompanies = (operations: LogicalOperation[]): Promise<ChaosCompany[]> =>
    setUpChaosCompanies(operations, { apis, ports, timeline, receiver, call });

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
  const killSandbox = (): Promise<void> =>
    killer.kill('sandbox_kill', 'sandbox', sandbox, startSandbox, SANDBOX_DOWN_MS);

  const killApi = (slot: number): Promise<void> =>
    killer.kill('api_kill', `api${slot}`, apis[slot], () => startApi(slot));

  const killWorker = (): Promise<void> => killer.kill('worker_kill', 'worker', worker, startWorker, 500);

  /** PostgreSQL restarted under the running processes, which must recover on their own. */
  const restartPostgres = (): Promise<void> =>
    restartPostgresUnder(timeline, database, apis, worker, POSTGRES_DOWN_MS);

  /** Runs a logical operation: through one API, or through both at once with the same key. */
  async function perform(operation: LogicalOperation): Promise<void> {
    const slots = operation.dual ? [0, 1] : [Math.floor(Math.random() * API_PROCESSES)];
    operation.calls = await Promise.all(slots.map((slot) => call(operation, slot)));
  }

  /** Every logical payment against the charges of the suite's sandbox (see chaos-books.ts). */
  const expectPaymentsMatchProvider = (...books: [Pool, ChaosCompany[], LogicalOperation[]]): Promise<void> =>
    expectPaymentsMatchSandbox(sandbox, ...books);

  const printSummary = (report: ChaosReport): void =>
    printChaosSummary(report, {
      timeline,
      killer,
      apis,
      worker,
      sandbox,
      receiver,
      providerFaults: PROVIDER_FAULTS,
      sandboxSeed,
    });
});
