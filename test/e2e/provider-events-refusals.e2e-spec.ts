import { randomUUID } from 'node:crypto';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import { GROSS, providerEventCalls, RECEIVER, startProviderEventsRig } from '../support/provider-event-calls';
import { eventBody, type SandboxEvent, signedHeaders } from '../support/provider-events';
import type { SandboxHttp } from '../support/provider-sandbox';
import { stopSandboxApp } from '../support/sandbox-app';
import type { TestApp, TestCompany } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * The provider's webhooks, end to end (see provider-events.e2e-spec.ts): events the receiver
 * refuses record nothing and never answer a 5xx.
 */
describe('provider events', () => {
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;
  let api: TestApp;
  let db: Pool;

  beforeAll(async () => {
    ({ sandbox, provider, api, db } = await startProviderEventsRig());
  });

  afterAll(async () => {
    await stopSandboxApp({ api, db });
  });

  const { deliver, aPayment, eventsOf, recorded } = providerEventCalls(() => ({
    sandbox,
    provider,
    api,
    db,
  }));

  describe('refusals: nothing recorded, never a 5xx', () => {
    async function aSignedEvent(company: TestCompany): Promise<SandboxEvent> {
      await aPayment(company, 'pm_card_lost_response');
      return (await eventsOf(company, 'charge.succeeded'))[0];
    }

    it('a bad signature → 401 provider_signature_invalid', async () => {
      const company = await api.newCompany();
      const event = await aSignedEvent(company);
      const body = eventBody(event);
      const headers = signedHeaders('whsec_' + Buffer.alloc(32, 7).toString('base64'), event.id, body);

      const response = await api.http.post(RECEIVER).set(headers).send(body);

      expect(response.status).toBe(401);
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(response.body).toMatchObject({ code: 'provider_signature_invalid' });
      const unsigned = await api.http.post(RECEIVER).set('content-type', 'application/json').send(body);
      expect(unsigned.status).toBe(401);
      // A signed body changed after signing.
      const tampered = await api.http
        .post(RECEIVER)
        .set(signedHeaders(sandbox.webhookSecret, event.id, body))
        .send(body.replace(String(GROSS), '1'));
      expect(tampered.status).toBe(401);
      expect(await recorded(company)).toEqual([]);
    });

    it('a stale timestamp → 401', async () => {
      const company = await api.newCompany();
      const event = await aSignedEvent(company);

      const response = await deliver(event, new Date(Date.now() - 10 * 60_000));

      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ code: 'provider_signature_invalid' });
      expect(await recorded(company)).toEqual([]);
    });

    it('an unknown event type → 422 provider_event_type_unknown', async () => {
      const company = await api.newCompany();
      const event = await aSignedEvent(company);

      const response = await deliver({ ...event, id: `evt_${randomUUID()}`, type: 'charge.disputed' });

      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ code: 'provider_event_type_unknown' });
      expect(await recorded(company)).toEqual([]);
    });

    it.each([
      ['data missing', (event: SandboxEvent) => ({ ...event, data: undefined })],
      ['a negative amount', (event: SandboxEvent) => ({ ...event, data: { ...event.data, amount: -5 } })],
      [
        'an amount as a string',
        (event: SandboxEvent) => ({ ...event, data: { ...event.data, amount: '12100' } }),
      ],
      ['no reference', (event: SandboxEvent) => ({ ...event, data: { ...event.data, reference: '' } })],
      ['an unreadable createdAt', (event: SandboxEvent) => ({ ...event, createdAt: 'yesterday' })],
    ])('a malformed event (%s) → 400 provider_event_invalid', async (_name, mangle) => {
      const company = await api.newCompany();
      const event = mangle(await aSignedEvent(company));
      const body = JSON.stringify(event);

      const response = await api.http
        .post(RECEIVER)
        .set(signedHeaders(sandbox.webhookSecret, event.id, body))
        .send(body);

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'provider_event_invalid' });
      expect(await recorded(company)).toEqual([]);
    });

    it('malformed JSON → 400 malformed_json; a body that is not an object → 400; another provider → 404', async () => {
      const broken = await api.http.post(RECEIVER).set('content-type', 'application/json').send('{"id": ');
      expect(broken.status).toBe(400);
      expect(broken.body).toMatchObject({ code: 'malformed_json' });
      const list = '[1,2]';
      const notAnObject = await api.http
        .post(RECEIVER)
        .set(signedHeaders(sandbox.webhookSecret, 'evt_x', list))
        .send(list);
      expect(notAnObject.status).toBe(400);
      expect(notAnObject.body).toMatchObject({ code: 'provider_event_invalid' });
      const other = await api.http.post('/v1/providers/stripe/events').send({});
      expect(other.status).toBe(404);
      const weird = await api.http.post('/v1/providers/Not%20A%20Provider/events').send({});
      expect(weird.status).toBe(404);
    });

    it('an event of no company here is acknowledged and ignored (not recorded)', async () => {
      const event: SandboxEvent = {
        id: `evt_${randomUUID()}`,
        type: 'charge.succeeded',
        createdAt: new Date().toISOString(),
        data: {
          id: 'ch_outside',
          reference: 'made-elsewhere',
          amount: 500,
          currency: 'EUR',
          status: 'succeeded',
          failureCode: null,
          refundedAmount: 0,
          refunds: [],
          metadata: {},
        },
      };
      const response = await deliver(event);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ duplicate: false, result: 'ignored' });
      const { rows } = await db.query(`SELECT 1 FROM provider_events WHERE event_id = $1`, [event.id]);
      expect(rows).toEqual([]);
    });
  });
});
