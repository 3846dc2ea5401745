import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { ChaosCompany, LogicalOperation } from './chaos-load';
import { SandboxHttp } from './provider-sandbox';

/** What the chaos suite reads of the books once its load and faults are over. */

/** How long the suite waits for the recovery to leave no payment `processing`. */
export const PAYMENTS_SETTLE_WAIT_MS = 60_000;

/**
 * For every logical payment: one local payment (the one its clients were told, with the status
 * they were told), and at the provider exactly the charges its outcome implies, matched by
 * `providerReference` — succeeded: one succeeded charge of its amount, the payment's
 * `providerChargeId`; failed with a charge id (a decline): that one failed charge; failed without
 * one (a refusal): none. No charge at the provider without its local payment, and each succeeded
 * payment has exactly one journal entry of its amount.
 */
export async function expectPaymentsMatchSandbox(
  sandbox: RunningProviderSandbox,
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

/** Webhook deliveries of the companies by status, once none is pending any more (bounded wait). */
export async function settledDeliveryStatuses(
  db: Pool,
  companyIds: string[],
): Promise<Record<string, number>> {
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
export async function stillProcessing(db: Pool, companyIds: string[]): Promise<string[]> {
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
