import { ApiProperty } from '@nestjs/swagger';
import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { IsDateTime, normalizeDateTime } from '@ledgerkey/documents';

/** The longest range one run compares. */
export const MAX_RECONCILIATION_RANGE_DAYS = 92;

/** `to` after `from`, at most MAX_RECONCILIATION_RANGE_DAYS later. */
function IsRangeEnd(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isRangeEnd',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be after from, at most ${MAX_RECONCILIATION_RANGE_DAYS} days later`,
        ...options,
      },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          const from = normalizeDateTime((args.object as { from?: unknown }).from);
          const to = normalizeDateTime(value);
          // Decided only on well-formed dates; IsDateTime reports the rest.
          if (from === null || to === null) return true;
          const span = Date.parse(to) - Date.parse(from);
          return span > 0 && span <= MAX_RECONCILIATION_RANGE_DAYS * 86_400_000;
        },
      },
    });
}

export class CreateReconciliationRunDto {
  @ApiProperty({
    example: '2026-11-01T00:00:00Z',
    format: 'date-time',
    description: "Inclusive: charges created and payouts paid from here (the provider's times)",
  })
  @IsDateTime()
  from: string;

  @ApiProperty({
    example: '2026-12-01T00:00:00Z',
    format: 'date-time',
    description: `Exclusive; after \`from\`, at most ${MAX_RECONCILIATION_RANGE_DAYS} days later`,
  })
  @IsDateTime()
  @IsRangeEnd()
  to: string;

  /** The range in UTC milliseconds: `…T02:00:00+02:00` and `…T00:00:00Z` are one payload. */
  fingerprintPayload(): unknown {
    return toReconciliationRange(this);
  }
}

export interface ReconciliationRange {
  from: string;
  to: string;
}

export function toReconciliationRange(dto: CreateReconciliationRunDto): ReconciliationRange {
  const from = normalizeDateTime(dto.from);
  const to = normalizeDateTime(dto.to);
  if (from === null || to === null) throw new Error('the range was not validated');
  return { from, to };
}
