import { MAGIC_PAYMENT_METHODS, type PaymentMethod } from './sandbox-objects';
import { invalidParameter, SandboxRequestError } from './sandbox.errors';

/** The parameters of `POST /v1/charges`, checked and normalized (currency upper case, metadata present). */
export interface ChargeParams {
  reference: string;
  amount: number;
  currency: string;
  paymentMethod: PaymentMethod;
  metadata: Record<string, string>;
}

/** `POST /_sandbox/charges`: a charge made "behind the merchant's back". */
export interface PlantedChargeParams extends ChargeParams {
  status: 'succeeded' | 'failed';
  failureCode: string | null;
  createdAt?: string;
  /** Send its `charge.*` webhook too (default false: nobody hears of it). */
  webhook: boolean;
}

export interface PayoutParams {
  companyId?: string;
  currency?: string;
}

export interface ListQuery {
  limit: number;
  startingAfter?: string;
  createdFrom?: Date;
  createdTo?: Date;
  reference?: string;
  companyId?: string;
}

type Body = Record<string, unknown>;

const MAX_METADATA_KEYS = 50;
const TEXT = /^[\x20-\x7e]+$/;

/** @throws SandboxRequestError 400 naming the parameter */
export function parseChargeParams(body: unknown): ChargeParams {
  const fields = objectOf(body, ['reference', 'amount', 'currency', 'paymentMethod', 'metadata']);
  const paymentMethod = fields.paymentMethod;
  if (
    typeof paymentMethod !== 'string' ||
    !(MAGIC_PAYMENT_METHODS as readonly string[]).includes(paymentMethod)
  ) {
    throw new SandboxRequestError(
      400,
      'payment_method_unknown',
      `paymentMethod must be one of ${MAGIC_PAYMENT_METHODS.join(', ')}.`,
      'paymentMethod',
    );
  }
  return {
    reference: text(fields, 'reference', 255),
    amount: amount(fields.amount, 'amount'),
    currency: currency(fields.currency, 'currency'),
    paymentMethod: paymentMethod as PaymentMethod,
    metadata: metadata(fields.metadata),
  };
}

/** @throws SandboxRequestError 400 naming the parameter */
export function parsePlantedChargeParams(body: unknown): PlantedChargeParams {
  const fields = objectOf(body, [
    'reference',
    'amount',
    'currency',
    'paymentMethod',
    'metadata',
    'status',
    'failureCode',
    'createdAt',
    'webhook',
  ]);
  const { status = 'succeeded', failureCode, createdAt, webhook = false, ...charge } = fields;
  if (status !== 'succeeded' && status !== 'failed')
    throw invalidParameter('status', 'status must be succeeded or failed.');
  if (typeof webhook !== 'boolean') throw invalidParameter('webhook', 'webhook must be true or false.');
  if (createdAt !== undefined && dateTime(createdAt) === undefined) {
    throw invalidParameter('createdAt', 'createdAt must be an ISO 8601 date-time.');
  }
  if (failureCode !== undefined && (typeof failureCode !== 'string' || !TEXT.test(failureCode))) {
    throw invalidParameter('failureCode', 'failureCode must be text.');
  }
  return {
    ...parseChargeParams({ paymentMethod: 'pm_card_visa', ...charge }),
    status,
    failureCode: status === 'failed' ? ((failureCode as string | undefined) ?? 'card_declined') : null,
    createdAt: createdAt === undefined ? undefined : new Date(createdAt as string).toISOString(),
    webhook,
  };
}

/** `{ amount? }`: undefined refunds what is left. @throws SandboxRequestError 400 */
export function parseRefundParams(body: unknown): { amount?: number } {
  const fields = objectOf(body ?? {}, ['amount']);
  return fields.amount === undefined ? {} : { amount: amount(fields.amount, 'amount') };
}

/** @throws SandboxRequestError 400 */
export function parsePayoutParams(body: unknown): PayoutParams {
  const fields = objectOf(body ?? {}, ['companyId', 'currency']);
  return {
    companyId: fields.companyId === undefined ? undefined : text(fields, 'companyId', 255),
    currency: fields.currency === undefined ? undefined : currency(fields.currency, 'currency'),
  };
}

/** @throws SandboxRequestError 400 for an unknown or bad query parameter */
export function parseListQuery(
  query: URLSearchParams,
  filters: ReadonlyArray<'reference' | 'companyId'>,
): ListQuery {
  const allowed = new Set(['limit', 'startingAfter', 'createdFrom', 'createdTo', ...filters]);
  for (const name of query.keys()) {
    if (!allowed.has(name)) throw invalidParameter(name, `Unknown query parameter ${name}.`);
  }
  const limitText = query.get('limit');
  const limit = limitText === null ? 100 : Number(limitText);
  if (!/^\d+$/.test(limitText ?? '100') || limit < 1 || limit > 1000) {
    throw invalidParameter('limit', 'limit must be an integer from 1 to 1000.');
  }
  const optionalText = (name: string): string | undefined => {
    const value = query.get(name);
    if (value === null) return undefined;
    if (value === '' || value.length > 255)
      throw invalidParameter(name, `${name} must be 1 to 255 characters.`);
    return value;
  };
  const optionalDate = (name: string): Date | undefined => {
    const value = query.get(name);
    if (value === null) return undefined;
    const date = dateTime(value);
    if (date === undefined) throw invalidParameter(name, `${name} must be an ISO 8601 date-time.`);
    return date;
  };
  return {
    limit,
    startingAfter: optionalText('startingAfter'),
    createdFrom: optionalDate('createdFrom'),
    createdTo: optionalDate('createdTo'),
    reference: filters.includes('reference') ? optionalText('reference') : undefined,
    companyId: filters.includes('companyId') ? optionalText('companyId') : undefined,
  };
}

function objectOf(body: unknown, known: readonly string[]): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new SandboxRequestError(400, 'body_invalid', 'The body must be a JSON object.');
  }
  for (const name of Object.keys(body)) {
    if (!known.includes(name)) throw invalidParameter(name, `Unknown parameter ${name}.`);
  }
  return body as Body;
}

function text(fields: Body, name: string, maxLength: number): string {
  const value = fields[name];
  if (typeof value !== 'string' || value.length > maxLength || !TEXT.test(value)) {
    throw invalidParameter(name, `${name} must be 1 to ${maxLength} printable ASCII characters.`);
  }
  return value;
}

function amount(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidParameter(name, `${name} must be a positive integer (minor units) up to 2^53 - 1.`);
  }
  return value;
}

function currency(value: unknown, name: string): string {
  if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value)) {
    throw invalidParameter(name, `${name} must be a three-letter ISO 4217 code.`);
  }
  return value.toUpperCase();
}

function metadata(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidParameter('metadata', 'metadata must be an object of strings.');
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_METADATA_KEYS) {
    throw invalidParameter('metadata', `metadata holds at most ${MAX_METADATA_KEYS} keys.`);
  }
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > 40 || typeof item !== 'string' || item.length > 500) {
      throw invalidParameter(
        `metadata.${key}`,
        'metadata keys are 1 to 40 characters, values strings up to 500.',
      );
    }
  }
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as Record<
    string,
    string
  >;
}

/** A date-time with a time zone (`Z` or an offset), or undefined. */
function dateTime(value: unknown): Date | undefined {
  if (
    typeof value !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value)
  ) {
    return undefined;
  }
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
