import type { Response } from 'supertest';
import { anInvoice, newKey } from './invoice.builder';
import { eventBody, type SandboxEvent, sandboxEventsOf, signedHeaders } from './provider-events';
import { type SandboxApp, startSandboxApp } from './sandbox-app';
import type { TestCompany } from './test-app';

export const RECEIVER = '/v1/providers/sandbox/events';
/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
export const GROSS = 12_100;

export interface Payment {
  id: string;
  status: string;
  providerReference: string;
  providerChargeId: string | null;
}

/**
 * The sandbox (it sends no events: the tests deliver them) and the application that trusts its
 * webhook secret.
 */
export function startProviderEventsRig(): Promise<SandboxApp> {
  return startSandboxApp((sandbox) => ({
    PAYMENT_PROVIDER_WEBHOOK_SECRET: sandbox.webhookSecret,
    PAYMENT_RECOVERY_INTERVAL_MS: '100',
  }));
}

/** Deliveries, payments and reads of the spec's rig (`rig()`, started in its beforeAll). */
export function providerEventCalls(rig: () => SandboxApp) {
  function deliver(event: SandboxEvent, at?: Date): Promise<Response> {
    const { api, sandbox } = rig();
    const body = eventBody(event);
    return api.http
      .post(RECEIVER)
      .set(signedHeaders(sandbox.webhookSecret, event.id, body, at))
      .send(body);
  }

  async function anIssuedInvoice(company: TestCompany): Promise<string> {
    const { api } = rig();
    const response = await api.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey('invoice'))
      .send(anInvoice().build());
    expect(response.status).toBe(201);
    return (response.body as { id: string }).id;
  }

  /** A payment the provider charged (`pm_card_visa`: 201) or whose answer it lost (202, processing). */
  async function aPayment(
    company: TestCompany,
    paymentMethod: 'pm_card_visa' | 'pm_card_lost_response',
    key = newKey('pay'),
  ): Promise<Payment & { invoiceId: string; key: string }> {
    const { api } = rig();
    const invoiceId = await anIssuedInvoice(company);
    const response = await api.http
      .post('/v1/payments/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send({ invoiceId, paymentMethod });
    expect(response.status).toBe(paymentMethod === 'pm_card_visa' ? 201 : 202);
    return { ...(response.body as Payment), invoiceId, key };
  }

  async function eventsOf(company: TestCompany, type?: string): Promise<SandboxEvent[]> {
    const { provider } = rig();
    const events = await sandboxEventsOf(provider, company.companyId);
    return type === undefined ? events : events.filter((event) => event.type === type);
  }

  async function chargeOf(reference: string): Promise<{ id: string }> {
    const { provider } = rig();
    const { body } = await provider.call('GET', `/v1/charges?reference=${encodeURIComponent(reference)}`);
    return (body as { data: Array<{ id: string }> }).data[0];
  }

  async function recorded(company: TestCompany): Promise<Array<{ event_id: string; status: string }>> {
    const { db } = rig();
    const { rows } = await db.query<{ event_id: string; status: string }>(
      `SELECT event_id, status FROM provider_events WHERE company_id = $1 ORDER BY received_at`,
      [company.companyId],
    );
    return rows;
  }

  async function paymentOf(company: TestCompany, id: string): Promise<Payment> {
    const { api } = rig();
    return (await api.http.get(`/v1/payments/${id}`).set(company.auth)).body as Payment;
  }

  async function countOf(sql: string, companyId: string): Promise<number> {
    const { db } = rig();
    const { rows } = await db.query<{ n: number }>(sql, [companyId]);
    return rows[0].n;
  }

  return { deliver, anIssuedInvoice, aPayment, eventsOf, chargeOf, recorded, paymentOf, countOf };
}
