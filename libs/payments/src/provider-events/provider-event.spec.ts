import { parseProviderEvent } from './provider-event';
import { ProviderEventInvalidError, ProviderEventTypeUnknownError } from './provider-events.errors';

const charge = {
  id: 'ch_1',
  reference: 'lkpay_1',
  amount: 12100,
  currency: 'eur',
  status: 'succeeded',
  failureCode: null,
  refundedAmount: 0,
  refunds: [],
  metadata: { companyId: 'c', paymentId: 'p' },
  payoutId: null,
  createdAt: '2026-12-01T10:00:00.000Z',
};
const payout = {
  id: 'po_1',
  companyId: 'c',
  currency: 'EUR',
  paidAt: '2026-12-01T10:00:00.000Z',
  amount: 11918,
  feeAmount: 182,
  charges: [{ id: 'ch_1', amount: 12100 }],
};

function event(type: string, data: unknown): Record<string, unknown> {
  return { id: 'evt_1', type, createdAt: '2026-12-01T10:00:00.000Z', data };
}

describe('parseProviderEvent', () => {
  it('reads charge events, upper-casing the currency', () => {
    const parsed = parseProviderEvent(event('charge.succeeded', { ...charge }));
    expect(parsed).toMatchObject({
      id: 'evt_1',
      type: 'charge.succeeded',
      data: { currency: 'EUR', amount: 12100 },
    });
  });

  it('reads payout events', () => {
    expect(parseProviderEvent(event('payout.paid', { ...payout }))).toMatchObject({
      type: 'payout.paid',
      data: { id: 'po_1', feeAmount: 182, charges: [{ id: 'ch_1', amount: 12100 }] },
    });
  });

  it('defaults what a provider may leave out: refunds, metadata, failureCode', () => {
    const { refunds: _refunds, metadata: _metadata, failureCode: _failure, ...bare } = charge;
    const parsed = parseProviderEvent(event('charge.failed', { ...bare, status: 'failed' }));
    expect(parsed.data).toMatchObject({ refunds: [], metadata: {}, failureCode: null });
  });

  it('refuses an unknown type only once the envelope is well formed', () => {
    expect(() => parseProviderEvent(event('charge.disputed', { ...charge }))).toThrow(
      ProviderEventTypeUnknownError,
    );
    expect(() => parseProviderEvent({ type: 'charge.disputed' })).toThrow(ProviderEventInvalidError);
  });

  it.each([
    ['not an object', [1, 2]],
    ['no id', { ...event('charge.succeeded', charge), id: '' }],
    ['data an array', event('charge.succeeded', [])],
    ['an amount of 0', event('charge.succeeded', { ...charge, amount: 0 })],
    ['a fractional amount', event('charge.succeeded', { ...charge, amount: 1.5 })],
    ['an amount beyond 2^53', event('charge.succeeded', { ...charge, amount: 2 ** 53 })],
    ['a currency of 4 letters', event('charge.succeeded', { ...charge, currency: 'EURO' })],
    ['an unknown charge status', event('charge.succeeded', { ...charge, status: 'pending' })],
    [
      'a refund without an id',
      event('charge.refunded', { ...charge, refunds: [{ amount: 1, createdAt: 'x' }] }),
    ],
    ['metadata with a number', event('charge.succeeded', { ...charge, metadata: { companyId: 1 } })],
    ['a payout without charges', event('payout.paid', { ...payout, charges: [] })],
    ['a payout with a negative fee', event('payout.paid', { ...payout, feeAmount: -1 })],
    ['a payout charge without an amount', event('payout.paid', { ...payout, charges: [{ id: 'ch_1' }] })],
    ['an unreadable paidAt', event('payout.paid', { ...payout, paidAt: 'soon' })],
  ])('refuses %s', (_name, body) => {
    expect(() => parseProviderEvent(body)).toThrow(ProviderEventInvalidError);
  });
});
