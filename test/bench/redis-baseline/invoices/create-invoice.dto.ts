import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsEmail,
  IsInt,
  IsISO31661Alpha2,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

export class CustomerDto {
  @IsString()
  @Length(1, 200)
  name: string;

  @IsOptional()
  @Matches(/^[A-Z0-9]{2,30}$/)
  vatId?: string;

  @IsISO31661Alpha2()
  countryCode: string;

  @IsOptional()
  @IsString()
  @Length(1, 500)
  address?: string;

  @IsOptional()
  @IsEmail()
  email?: string;
}

export class InvoiceLineDto {
  @IsString()
  @Length(1, 1000)
  description: string;

  /** Decimal string, > 0, at most 4 decimals. */
  @Matches(/^(?!0+(\.0+)?$)\d{1,10}(\.\d{1,4})?$/)
  quantity: string;

  /** Minor units. */
  @IsInt()
  @Min(0)
  @Max(1_000_000_000_000)
  unitPrice: number;

  /** Percent, 0–100, at most 2 decimals. */
  @Matches(/^(100(\.0{1,2})?|\d{1,2}(\.\d{1,2})?)$/)
  vatRate: string;
}

export class CreateInvoiceDto {
  @IsOptional()
  @Matches(/^[A-Z0-9]{1,10}$/)
  series?: string;

  @IsOptional()
  @Matches(/^[A-Z]{3}$/)
  currency?: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  issueDate?: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  dueDate?: string;

  @ValidateNested()
  @Type(() => CustomerDto)
  customer: CustomerDto;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => InvoiceLineDto)
  lines: InvoiceLineDto[];

  @IsOptional()
  @IsString()
  @Length(1, 2000)
  notes?: string;
}
