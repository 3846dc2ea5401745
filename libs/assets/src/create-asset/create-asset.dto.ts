import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import { ACCOUNTING_MONTH } from '../accounting-month';

const MAX_COST = 1_000_000_000_000;

/** Below the object's `cost` (skipped while cost is not a number: its own validator reports it). */
function IsBelowCost(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isBelowCost',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must be less than cost' },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          const cost = (args.object as { cost?: unknown }).cost;
          return typeof cost !== 'number' || typeof value !== 'number' || value < cost;
        },
      },
    });
}

/** `POST /v1/assets/create`: a fixed asset depreciated straight-line. */
export class CreateAssetDto {
  @ApiProperty({ example: 'Delivery van' })
  @IsString()
  @CodePointLength(1, 200)
  name: string;

  @ApiProperty({ example: 2400000, description: "Acquisition cost in the company currency's minor unit" })
  @IsInt()
  @Min(1)
  @Max(MAX_COST)
  cost: number;

  @ApiPropertyOptional({
    example: 400000,
    default: 0,
    description: 'What the asset is worth at the end of its useful life: less than cost',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @IsBelowCost()
  residualValue?: number;

  @ApiProperty({ example: 60, minimum: 1, maximum: 1200 })
  @IsInt()
  @Min(1)
  @Max(1200)
  usefulLifeMonths: number;

  @ApiProperty({
    example: '2026-11',
    pattern: ACCOUNTING_MONTH.source,
    description:
      'First month depreciated, YYYY-MM, with a full month (no partial months: choose the month of ' +
      'acquisition or the next one, as your policy says). Must be after the last period already depreciated.',
  })
  @Matches(ACCOUNTING_MONTH, { message: 'startMonth must be a month written YYYY-MM' })
  startMonth: string;

  /** The request as stored: the residual value defaulted. */
  fingerprintPayload(): unknown {
    return { ...this, residualValue: this.residualValue ?? 0 };
  }
}
