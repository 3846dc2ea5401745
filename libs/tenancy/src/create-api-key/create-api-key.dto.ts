import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import { API_KEY_SCOPES, type ApiKeyScope } from '../api-key';

export class CreateApiKeyDto {
  @ApiPropertyOptional({
    example: 'Finance team (browse only)',
    description: 'What the key is for, shown in lists (1–100 characters).',
  })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 100)
  name?: string;

  @ApiProperty({
    enum: API_KEY_SCOPES,
    example: 'read_only',
    description:
      '`read_write`: every route. `read_only`: GET routes only — the key to give people who only ' +
      'browse; any create, change or revoke answers `403 forbidden`.',
  })
  @IsIn(API_KEY_SCOPES, { message: `scope must be one of ${API_KEY_SCOPES.join(', ')}` })
  scope: ApiKeyScope;
}
