import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signWebhook } from './webhook-signature';

describe('webhook signatures', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('signs so that the standardwebhooks verifier accepts the body and rejects a changed one', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ id: 'evt', type: 'invoice.created' });
    const headers = signWebhook(secret, 'evt', body, new Date());
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, { ...headers })).toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow();
  });
});
