import { ApiProperty } from '@nestjs/swagger';

/** A document's customer or supplier as the API shows it. (The class name is the OpenAPI schema name.) */
export class PartyView {
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) vatId: string | null;
  @ApiProperty() countryCode: string;
  @ApiProperty({ type: String, nullable: true }) address: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
}
