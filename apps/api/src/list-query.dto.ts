import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 10;

/** `?limit=&startingAfter=` cursor pagination, as every list route takes it. */
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

  @ApiPropertyOptional({ format: 'uuid', description: 'Id of the last object of the previous page' })
  @IsOptional()
  @IsUUID('all', { message: 'startingAfter must be an id returned by this API' })
  startingAfter?: string;
}
