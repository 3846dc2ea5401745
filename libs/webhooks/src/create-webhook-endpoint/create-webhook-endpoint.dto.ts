import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsString,
  MaxLength,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import { EVENT_TYPES } from '@ledgerkey/outbox';

export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const ALL_EVENTS = '*';
const ENABLED_EVENT_VALUES = [...EVENT_TYPES, ALL_EVENTS];

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

export class CreateWebhookEndpointDto {
  @ApiProperty({
    example: 'https://example.com/webhooks/ledgerkey',
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    description:
      'Absolute http(s) URL. Its host must be, and resolve to, public addresses only (no loopback, ' +
      'private, link-local, CGNAT, multicast …) unless the server runs with ' +
      'WEBHOOK_ALLOW_PRIVATE_TARGETS=true; otherwise `422 webhook_url_forbidden`.',
  })
  @IsString()
  @MaxLength(MAX_WEBHOOK_URL_LENGTH)
  @IsWebhookUrl()
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
}
