import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Registry } from 'prom-client';
import { ApiOperatorOnly, ApiPublic } from '../openapi-audience';

/**
 * Prometheus metrics. No authentication and no tenant data (nothing is labelled by company);
 * still operational detail: serve it to the scraper only, never publicly.
 */
@ApiOperatorOnly()
@ApiPublic()
@ApiTags('Operations')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: Registry) {}

  @Get()
  @ApiOperation({
    operationId: 'getMetrics',
    summary: 'Prometheus metrics (text exposition format); for the scraper, not for the public internet',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description: 'Prometheus text exposition format, version 0.0.4',
    schema: { type: 'string' },
  })
  async metrics(@Res({ passthrough: true }) response: Response): Promise<string> {
    const text = await this.registry.metrics();
    response.type(this.registry.contentType);
    return text;
  }
}
