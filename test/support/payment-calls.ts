import type { Response } from 'supertest';
import { anInvoice, newKey } from './invoice.builder';
import { eventually } from './payment-books';
import type { SandboxApp } from './sandbox-app';
import type { TestCompany } from './test-app';

export const CREATE = '/v1/payments/create';
/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
export const GROSS = 12_100;

export interface PaymentBody {
  id: string;
  object: string;
  invoiceId: string;
  amount: number;
  currency: string;
  status: 'processing' | 'succeeded' | 'failed';
  failureCode: string | null;
  provider: string;
  providerReference: string;
  providerChargeId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Invoices to pay, payments and the sandbox's counters on the spec's rig (`ctx()`, started in its beforeAll). */
export function paymentCalls(ctx: () => SandboxApp) {
  async function anIssuedInvoice(company: TestCompany): Promise<{ id: string; grossTotal: number }> {
    const { api } = ctx();
    const response = await api.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey('invoice'))
      .send(anInvoice().build());
    expect(response.status).toBe(201);
    return response.body as { id: string; grossTotal: number };
  }

  function pay(company: TestCompany, body: Record<string, unknown>, key: string): Promise<Response> {
    const { api } = ctx();
    return api.http.post(CREATE).set(company.auth).set('Idempotency-Key', key).send(body);
  }

  /** Retries with the key (honouring 409 and 202) until the answer is final. */
  async function payUntilFinal(
    company: TestCompany,
    body: Record<string, unknown>,
    key: string,
  ): Promise<Response> {
    return eventually(
      () => pay(company, body, key),
      (response) => response.status !== 202 && response.status !== 409,
      15_000,
      250,
    );
  }

  async function counters(reference?: string): Promise<{
    charges: { total: number };
    faultsInjected: { error: number; timeout: number; lostResponse: number };
    byReference?: { charges: number };
  }> {
    const { provider } = ctx();
    const query = reference === undefined ? '' : `?reference=${encodeURIComponent(reference)}`;
    return (await provider.call('GET', `/_sandbox/counters${query}`)).body;
  }

  return { anIssuedInvoice, pay, payUntilFinal, counters };
}
