import { Controller, Get, HttpCode } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { SchemaState } from '@ledgerkey/database';
import { ApiOperatorOnly, ApiPublic } from '../openapi-audience';

export class ServiceUnavailableError extends Error {
  readonly code = 'service_unavailable';
}

@ApiOperatorOnly()
@ApiPublic()
@ApiTags('Operations')
@Controller('health')
export class HealthController {
  constructor(private readonly schema: SchemaState) {}

  @Get('live')
  @HttpCode(200)
  @ApiOperation({ operationId: 'getLiveness', summary: 'The process is up' })
  @ApiOkResponse({
    description: 'Alive',
    schema: {
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string', enum: ['ok'] } },
    },
  })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ operationId: 'getReadiness', summary: 'Database reachable and every migration applied' })
  @ApiOkResponse({
    description: 'Ready to serve',
    schema: {
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string', enum: ['ready'] } },
    },
  })
  @ApiServiceUnavailableResponse({ description: '`service_unavailable`' })
  async ready(): Promise<{ status: 'ready' }> {
    let pending: string[];
    try {
      pending = await this.schema.pending();
    } catch (error) {
      throw new ServiceUnavailableError('The database is not reachable.', { cause: error });
    }
    if (pending.length > 0) throw new ServiceUnavailableError('Database migrations are pending.');
    return { status: 'ready' };
  }
}
