import { ApiProperty } from '@nestjs/swagger';
import { API_KEY_SCOPES, type ApiKeyScope } from '../api-key';

/** An API key as lists show it: never the secret, only its first characters. */
export class ApiKeyView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['api_key'] }) object: 'api_key';
  @ApiProperty({ type: String, nullable: true, example: 'Finance team (browse only)' }) name: string | null;
  @ApiProperty({
    enum: API_KEY_SCOPES,
    description:
      '`read_write`: every route. `read_only`: GET routes only; anything else answers `403 forbidden`.',
  })
  scope: ApiKeyScope;
  @ApiProperty({ example: 'lk_Q2x9aB', description: 'The first characters of the key, to recognise it' })
  prefix: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revokedAt: string | null;
}

export class CreatedApiKeyView extends ApiKeyView {
  @ApiProperty({
    example: 'lk_Q2x9aBv4mN0c3dJq8ZpR1sT6uW5yX7eF2gH4iK9lM0o',
    description:
      'The API key. Shown only in this response (and its idempotent replay while the ' +
      'Idempotency-Key is retained); only its SHA-256 hash is stored. Store it now.',
  })
  secret: string;
}

export class ApiKeyListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [ApiKeyView] }) data: ApiKeyView[];
  @ApiProperty() hasMore: boolean;
}
