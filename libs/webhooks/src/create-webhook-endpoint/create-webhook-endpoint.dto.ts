import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsString,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import { CodePointLength, codePointLength, type Metadata, MetadataProperty } from '@ledgerkey/database';
import { EVENT_TYPES } from '@ledgerkey/outbox';

export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const ALL_EVENTS = '*';
const ENABLED_EVENT_VALUES = [...EVENT_TYPES, ALL_EVENTS];

/**
 * The form a webhook URL is stored, shown and called in: its WHATWG serialization (host
 * lower-cased and punycoded, default port dropped, path and query percent-encoded, so "é"
 * becomes "%C3%A9"). Null when the text is not a URL.
 */
function normalizeWebhookUrl(value: string): string | null {
  return URL.canParse(value) ? new URL(value).href : null;
}

/** An absolute http(s) URL without credentials or fragment. Whether its target is allowed is the handler's check. */
function IsWebhookUrl(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isWebhookUrl',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: 'url must be an absolute http or https URL without credentials or fragment',
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string' || !URL.canParse(value)) return false;
          const url = new URL(value);
          return (
            (url.protocol === 'http:' || url.protocol === 'https:') &&
            url.hostname !== '' &&
            url.username === '' &&
            url.password === '' &&
            url.hash === '' &&
            !value.includes('#')
          );
        },
      },
    });
}

/**
 * The normalized URL (what is stored, see normalizeWebhookUrl) fits the column: percent-encoding
 * can make a URL up to 12 times longer than it was sent.
 */
function FitsAsStored(max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'fitsAsStored',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args) =>
          `url must be at most ${max} characters once normalized (non-ASCII characters are ` +
          `percent-encoded, "é" as "%C3%A9"); this one becomes ${codePointLength(
            normalizeWebhookUrl(args.value as string) ?? '',
          )}`,
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string') return false;
          const stored = normalizeWebhookUrl(value);
          // Not a URL at all: IsWebhookUrl says so.
          return stored === null || codePointLength(stored) <= max;
        },
      },
    });
}

export class CreateWebhookEndpointDto {
  @ApiProperty({
    example: 'https://example.com/webhooks/ledgerkey',
    description:
      'Absolute http(s) URL, stored and returned in its normalized (WHATWG) form, which must fit ' +
      `${MAX_WEBHOOK_URL_LENGTH} characters as well: non-ASCII characters are percent-encoded. ` +
      'Its host must be, and resolve to, public addresses only (no loopback, ' +
      'private, link-local, CGNAT, multicast …) unless the server runs with ' +
      'WEBHOOK_ALLOW_PRIVATE_TARGETS=true; otherwise `422 webhook_url_forbidden`.',
  })
  @IsString()
  @CodePointLength(1, MAX_WEBHOOK_URL_LENGTH)
  @IsWebhookUrl()
  @FitsAsStored(MAX_WEBHOOK_URL_LENGTH)
  url: string;

  @ApiProperty({
    type: [String],
    enum: ENABLED_EVENT_VALUES,
    example: ['invoice.created', 'credit_note.created'],
    description: 'Event types to receive; `"*"` receives every type, including types added later.',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(ENABLED_EVENT_VALUES.length)
  @ArrayUnique()
  @IsIn(ENABLED_EVENT_VALUES, {
    each: true,
    message: `each enabledEvents value must be one of ${ENABLED_EVENT_VALUES.join(', ')}`,
  })
  enabledEvents: string[];

  @MetadataProperty()
  metadata?: Metadata;
}
