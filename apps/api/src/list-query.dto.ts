import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsUUID,
  Max,
  Min,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import type { ListOrder, PageRequest } from '@ledgerkey/database';

export const DEFAULT_PAGE_SIZE = 10;
const ORDERS: readonly ListOrder[] = ['asc', 'desc'];

/** Ids are case-insensitive: one spelling reaches the SQL. */
const lowerCase = ({ value }: { value: unknown }) =>
  typeof value === 'string' ? value.toLowerCase() : value;

/**
 * `?limit=&startingAfter=|endingBefore=&order=` keyset pagination, as every list route takes
 * it; a list's filters extend this class and say what they select in `filter()`.
 */
export class ListQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value,
  )
  @IsInt({ message: 'limit must be an integer from 1 to 100' })
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'The id of the last object of the previous page: the page after it, in `order`',
  })
  @IsOptional()
  @Transform(lowerCase)
  @IsUUID('all', { message: 'startingAfter must be an id returned by this API' })
  startingAfter?: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'The id of the first object of the next page: the page before it, still in `order` (`hasMore` then ' +
      'says whether more precede it). Not together with `startingAfter`.',
  })
  @IsOptional()
  @Transform(lowerCase)
  @IsUUID('all', { message: 'endingBefore must be an id returned by this API' })
  @IsAbsentWith('startingAfter')
  endingBefore?: string;

  @ApiPropertyOptional({
    enum: ORDERS,
    default: 'asc',
    description:
      "`asc`: the list's natural order (as its summary says: creation, numbering or commit order), " +
      'oldest first; `desc`: newest first.',
  })
  @IsOptional()
  @IsIn(ORDERS, { message: 'order must be asc or desc' })
  order?: ListOrder;

  page(): PageRequest {
    return {
      limit: this.limit ?? DEFAULT_PAGE_SIZE,
      startingAfter: this.startingAfter,
      endingBefore: this.endingBefore,
      order: this.order ?? 'asc',
    };
  }

  /** What the list's filters select; none here. */
  filter(): object {
    return {};
  }
}

/** Refuses the property when `other` is given too (two cursors name two different pages). */
export function IsAbsentWith(other: string, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isAbsentWith',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      options: { message: `$property cannot be combined with ${other}`, ...options },
      validator: {
        validate: (value: unknown, args) =>
          value === undefined || (args?.object as Record<string, unknown>)[other] === undefined,
      },
    });
  };
}

/** Refuses a date before the `from` property's date (an empty range is a mistake, not a query). */
export function IsNotBefore(from: string, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isNotBefore',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [from],
      options: { message: `$property must not be before ${from}`, ...options },
      validator: {
        validate: (value: unknown, args) => {
          const start = (args?.object as Record<string, unknown>)[from];
          return typeof value !== 'string' || typeof start !== 'string' || start <= value;
        },
      },
    });
  };
}

export { lowerCase };
