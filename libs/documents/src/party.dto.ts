import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsISO31661Alpha2, IsOptional, IsString, Matches } from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';

export const MAX_PARTY_NAME_LENGTH = 200;

/**
 * The other party of a document: the customer of a sales invoice, the supplier of a purchase
 * invoice. (The class name is the OpenAPI schema name.)
 */
export class PartyDto {
  @ApiProperty({ example: 'UAB Pirkėjas' })
  @IsString()
  @CodePointLength(1, MAX_PARTY_NAME_LENGTH)
  name: string;

  @ApiPropertyOptional({ example: 'LT100001234567', maxLength: 30 })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z0-9]{2,30}$/, { message: 'vatId must be 2–30 upper-case letters and digits' })
  vatId?: string;

  @ApiProperty({ example: 'LT', description: 'ISO 3166-1 alpha-2, upper case' })
  @Matches(/^[A-Z]{2}$/, { message: 'countryCode must be two upper-case letters' })
  @IsISO31661Alpha2()
  countryCode: string;

  @ApiPropertyOptional({ example: 'Gedimino pr. 1, Vilnius' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 500)
  address?: string;

  @ApiPropertyOptional({ example: 'ap@example.lt' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 254)
  @IsEmail()
  email?: string;
}

/** A party as documents store and show it: every member present, absent ones null. */
export interface Party {
  name: string;
  vatId: string | null;
  countryCode: string;
  address: string | null;
  email: string | null;
}

/**
 * The validated party with absent members made null, in the order the API shows them. Also
 * rebuilds a party read from jsonb, which does not keep key order.
 */
export function partyOf(party: {
  name: string;
  vatId?: string | null;
  countryCode: string;
  address?: string | null;
  email?: string | null;
}): Party {
  return {
    name: party.name,
    vatId: party.vatId ?? null,
    countryCode: party.countryCode,
    address: party.address ?? null,
    email: party.email ?? null,
  };
}
