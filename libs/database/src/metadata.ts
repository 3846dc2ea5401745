import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, registerDecorator } from 'class-validator';
import { codePointLength } from './text-length.validator';

/**
 * `metadata`: the client's own string key/values on a created object (its order id, a CRM
 * reference…), stored with the object, immutable, returned and part of the request fingerprint.
 * The bounds are the schema's too (`is_valid_metadata()`, migration 1766200000000).
 */
export type Metadata = Record<string, string>;

export const METADATA_LIMITS = { keys: 20, keyLength: 40, valueLength: 500 } as const;

/** `[` and `]` would make `?metadata[key]=value` ambiguous. */
const KEY_PATTERN = /^[^[\]]+$/;

/** Why `value` is not valid metadata, or null when it is. */
export function metadataProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'must be an object of string values';
  }
  const entries = Object.entries(value);
  if (entries.length > METADATA_LIMITS.keys) return `must have at most ${METADATA_LIMITS.keys} keys`;
  for (const [key, item] of entries) {
    const keyLength = codePointLength(key);
    if (keyLength < 1 || keyLength > METADATA_LIMITS.keyLength || !KEY_PATTERN.test(key)) {
      return `key "${key.slice(0, 60)}" must be 1–${METADATA_LIMITS.keyLength} characters without [ or ]`;
    }
    if (typeof item !== 'string') return `value of "${key}" must be a string`;
    if (codePointLength(item) > METADATA_LIMITS.valueLength) {
      return `value of "${key}" must be at most ${METADATA_LIMITS.valueLength} characters`;
    }
  }
  return null;
}

/**
 * The stored and answered form: keys in code-unit order, so the create's answer, a GET and an
 * event show the same bytes (jsonb keeps no key order of its own). Absent means empty.
 */
export function metadataOf(value: Metadata | null | undefined): Metadata {
  const sorted: Metadata = {};
  for (const key of Object.keys(value ?? {}).sort()) sorted[key] = (value as Metadata)[key];
  return sorted;
}

function isEmptyObject(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.getPrototypeOf(value) === Object.prototype &&
    Object.keys(value).length === 0
  );
}

/** The optional `metadata` property of a create body: validated, documented. */
export function MetadataProperty(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    // `{}` is no metadata: one request for the fingerprint whichever the client sends.
    Transform(({ value }: { value: unknown }) => (isEmptyObject(value) ? undefined : value))(
      target,
      propertyName as string,
    );
    IsOptional()(target, propertyName);
    registerDecorator({
      name: 'metadata',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {},
      validator: {
        validate: (value: unknown) => metadataProblem(value) === null,
        defaultMessage: (args) => `${args?.property ?? 'metadata'} ${metadataProblem(args?.value)}`,
      },
    });
    ApiPropertyOptional({
      type: 'object',
      additionalProperties: { type: 'string', maxLength: METADATA_LIMITS.valueLength },
      maxProperties: METADATA_LIMITS.keys,
      example: { crmId: 'deal-3120' },
      description:
        `Your own string key/values (at most ${METADATA_LIMITS.keys} keys of 1–${METADATA_LIMITS.keyLength} ` +
        `characters without \`[\` \`]\`, values of at most ${METADATA_LIMITS.valueLength}). Stored with the ` +
        'object and immutable, returned (keys sorted), part of the Idempotency-Key fingerprint.',
    })(target, propertyName as string);
  };
}

/** The `metadata` member of an answer (always present; `{}` when none was sent). */
export function MetadataViewProperty(): PropertyDecorator {
  return ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { crmId: 'deal-3120' },
    description: 'Your key/values sent at creation, keys sorted',
  });
}

/**
 * Metadata as a create's command (and so its Idempotency-Key fingerprint) holds it: sorted, and
 * absent when empty — so no `metadata`, `{}` and a request fingerprinted before metadata existed
 * are one request, and a key stored before the upgrade still replays.
 */
export function commandMetadataOf(value: Metadata | null | undefined): Metadata | undefined {
  return value === null || value === undefined || Object.keys(value).length === 0
    ? undefined
    : metadataOf(value);
}
