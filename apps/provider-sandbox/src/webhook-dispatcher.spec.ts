import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { signedHeaders } from './webhook-dispatcher';

describe('signedHeaders (Standard Webhooks)', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const event = { id: 'evt_1', body: '{"id":"evt_1","type":"charge.succeeded","createdAt":"…","data":{}}' };

  it('signs so that a Standard Webhooks verifier accepts the body, with the event id as webhook-id', () => {
    const headers = signedHeaders(new Webhook(secret), event, new Date());
    expect(headers['webhook-id']).toBe('evt_1');
    expect(new Webhook(secret).verify(event.body, headers)).toEqual(JSON.parse(event.body));
  });

  it('is refused for a changed body, another secret, or a stale timestamp', () => {
    const headers = signedHeaders(new Webhook(secret), event, new Date());
    expect(() => new Webhook(secret).verify(event.body.replace('evt_1', 'evt_2'), headers)).toThrow(
      WebhookVerificationError,
    );
    const other = `whsec_${Buffer.alloc(32, 8).toString('base64')}`;
    expect(() => new Webhook(other).verify(event.body, headers)).toThrow(WebhookVerificationError);
    const stale = signedHeaders(new Webhook(secret), event, new Date(Date.now() - 10 * 60_000));
    expect(() => new Webhook(secret).verify(event.body, stale)).toThrow(WebhookVerificationError);
  });
});
