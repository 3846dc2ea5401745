import type {
  ProviderCharge,
  ProviderChargeStatus,
  ProviderEvent,
  ProviderEventType,
  ProviderPayout,
} from '../provider-objects';
import { ProviderEventInvalidError, ProviderEventTypeUnknownError } from './provider-events.errors';

export const PROVIDER_EVENT_TYPES: readonly ProviderEventType[] = [
  'charge.succeeded',
  'charge.failed',
  'charge.refunded',
  'payout.paid',
];
const CHARGE_STATUSES: readonly ProviderChargeStatus[] = ['succeeded', 'failed', 'refunded'];

type Json = Record<string, unknown>;

/**
 * A provider event body (shared/api-v1.md, "Provider events"), checked field by field: every
 * field ledgerkey reads has the documented type and bounds. Unknown extra fields are kept.
 * @throws ProviderEventInvalidError when the shape is wrong
 * @throws ProviderEventTypeUnknownError when it is well formed but of a type not handled
 */
export function parseProviderEvent(body: unknown): ProviderEvent {
  const event = object(body, 'the body');
  const id = text(event, 'id', 'the event');
  const type = text(event, 'type', 'the event', 100);
  dateTime(event, 'createdAt', 'the event');
  const data = object(event.data, 'data');
  if (!(PROVIDER_EVENT_TYPES as readonly string[]).includes(type))
    throw new ProviderEventTypeUnknownError(type);
  if (type === 'payout.paid') {
    checkPayout(data);
    return { id, type, createdAt: event.createdAt as string, data: data as unknown as ProviderPayout };
  }
  checkCharge(data);
  return {
    id,
    type: type as Exclude<ProviderEventType, 'payout.paid'>,
    createdAt: event.createdAt as string,
    data: data as unknown as ProviderCharge,
  };
}

function checkCharge(charge: Json): void {
  text(charge, 'id', 'data');
  text(charge, 'reference', 'data');
  amount(charge, 'amount', 'data', 1);
  currency(charge, 'data');
  const status = text(charge, 'status', 'data');
  if (!(CHARGE_STATUSES as readonly string[]).includes(status)) invalid(`data.status "${status}" is unknown`);
  if (charge.failureCode !== null && charge.failureCode !== undefined) text(charge, 'failureCode', 'data');
  charge.failureCode ??= null;
  amount(charge, 'refundedAmount', 'data', 0);
  const refunds = charge.refunds ?? [];
  if (!Array.isArray(refunds) || refunds.length > 1000) invalid('data.refunds must be an array');
  refunds.forEach((refund: unknown, index: number) => {
    const where = `data.refunds[${index}]`;
    const item = object(refund, where);
    text(item, 'id', where);
    amount(item, 'amount', where, 1);
    dateTime(item, 'createdAt', where);
  });
  charge.refunds = refunds;
  const metadata = charge.metadata ?? {};
  const entries = Object.entries(object(metadata, 'data.metadata'));
  if (entries.some(([, value]) => typeof value !== 'string')) invalid('data.metadata values must be strings');
  charge.metadata = metadata;
  charge.payoutId ??= null;
}

function checkPayout(payout: Json): void {
  text(payout, 'id', 'data');
  text(payout, 'companyId', 'data');
  currency(payout, 'data');
  dateTime(payout, 'paidAt', 'data');
  amount(payout, 'feeAmount', 'data', 0);
  const charges = payout.charges;
  if (!Array.isArray(charges) || charges.length === 0 || charges.length > 10_000) {
    invalid('data.charges must be a non-empty array');
  }
  charges.forEach((charge: unknown, index: number) => {
    const where = `data.charges[${index}]`;
    const item = object(charge, where);
    text(item, 'id', where);
    // A charge paid out with nothing is accepted and left out of the settlement's allocations.
    amount(item, 'amount', where, 0);
  });
}

function invalid(problem: string): never {
  throw new ProviderEventInvalidError(problem);
}

function object(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    invalid(`${where} must be an object`);
  return value as Json;
}

function text(holder: Json, field: string, where: string, max = 255): string {
  const value = holder[field];
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    invalid(`${where}.${field} must be a string of 1–${max} characters`);
  }
  return value;
}

function amount(holder: Json, field: string, where: string, min: number): void {
  const value = holder[field];
  if (!Number.isSafeInteger(value) || (value as number) < min) {
    invalid(`${where}.${field} must be an integer ≥ ${min} (minor units)`);
  }
}

function currency(holder: Json, where: string): void {
  const value = holder.currency;
  if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value))
    invalid(`${where}.currency must be ISO 4217`);
  holder.currency = value.toUpperCase();
}

function dateTime(holder: Json, field: string, where: string): void {
  const value = holder[field];
  if (typeof value !== 'string' || value.length > 40 || Number.isNaN(Date.parse(value))) {
    invalid(`${where}.${field} must be an ISO 8601 date-time`);
  }
}
