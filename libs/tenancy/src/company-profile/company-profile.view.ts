import { ApiProperty } from '@nestjs/swagger';

export class CompanyAddressView {
  @ApiProperty({ type: String, nullable: true, example: 'Gedimino pr. 1' }) street: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Vilnius' }) city: string | null;
  @ApiProperty({ type: String, nullable: true, example: '01103' }) postalCode: string | null;
  @ApiProperty({ example: 'LT', description: "Defaults to the company's country" }) countryCode: string;
}

/**
 * The seller of an invoice or credit note: the company profile as it was when the document was
 * issued (a snapshot, immutable with the document; later profile changes do not alter it).
 */
export class SellerView {
  @ApiProperty({ example: 'UAB Pardavėjas' }) legalName: string;
  @ApiProperty({ type: String, nullable: true, example: 'LT100009876543' }) vatId: string | null;
  @ApiProperty({ type: String, nullable: true, example: '304567890' }) registrationNumber: string | null;
  @ApiProperty({ type: CompanyAddressView }) address: CompanyAddressView;
  @ApiProperty({ type: String, nullable: true, example: 'LT601010012345678901' }) iban: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'billing@example.lt' }) email: string | null;
  @ApiProperty({ type: String, nullable: true, example: '0200:304567890' }) peppolId: string | null;
}

/** `GET /v1/company/profile`: the profile new documents are issued with. */
export class CompanyProfileView extends SellerView {
  @ApiProperty({ enum: ['company_profile'] }) object: 'company_profile';
}
