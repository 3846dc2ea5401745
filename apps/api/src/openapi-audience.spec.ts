import 'reflect-metadata';
import { Controller, Get, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ApiBearerAuth, ApiOkResponse, ApiTags, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { ApiOperatorOnly, ApiPublic, splitByAudience } from './openapi-audience';

class InvoiceView {}
class CompanyView {}

@ApiTags('Invoices')
@ApiBearerAuth()
@Controller('v1/invoices')
class InvoicesController {
  @Get()
  @ApiOkResponse({ type: InvoiceView })
  list(): InvoiceView[] {
    return [];
  }
}

/** A route added later, marked like the admin controller: it lands in the operator document only. */
@ApiOperatorOnly()
@ApiTags('Admin')
@ApiBearerAuth('admin')
@Controller('admin/things')
class AdminThingsController {
  @Post()
  @ApiOkResponse({ type: CompanyView })
  create(): CompanyView {
    return new CompanyView();
  }

  @Get('ping')
  @ApiPublic()
  @ApiOkResponse({ description: 'pong' })
  ping(): string {
    return 'pong';
  }
}

describe('splitByAudience', () => {
  it('puts each operation in the document of its audience, with only what it references', async () => {
    const app = await NestFactory.create<NestExpressApplication>(
      { module: class TestModule {}, controllers: [InvoicesController, AdminThingsController] },
      { logger: false, preview: true, abortOnError: false },
    );
    const config = new DocumentBuilder()
      .addBearerAuth({ type: 'http', scheme: 'bearer' })
      .addBearerAuth({ type: 'http', scheme: 'bearer' }, 'admin')
      .addTag('Invoices')
      .addTag('Admin')
      .build();
    const all = SwaggerModule.createDocument(app, config);
    await app.close();

    const { customer, operator } = splitByAudience(all);

    expect(Object.keys(customer.paths)).toEqual(['/v1/invoices']);
    expect(Object.keys(customer.components?.schemas ?? {})).toEqual(['InvoiceView']);
    expect(Object.keys(customer.components?.securitySchemes ?? {})).toEqual(['bearer']);
    expect(customer.tags?.map((tag) => tag.name)).toEqual(['Invoices']);

    expect(Object.keys(operator.paths)).toEqual(['/admin/things', '/admin/things/ping']);
    expect(Object.keys(operator.components?.schemas ?? {})).toEqual(['CompanyView']);
    expect(Object.keys(operator.components?.securitySchemes ?? {})).toEqual(['admin']);
    expect(operator.tags?.map((tag) => tag.name)).toEqual(['Admin']);
    expect(operator.paths['/admin/things/ping'].get?.security).toEqual([]);
    expect(operator.paths['/admin/things'].post?.security).toEqual([{ admin: [] }]);
    expect(JSON.stringify({ customer, operator })).not.toContain('x-ledgerkey-');
    // The input is left as it was.
    expect(Object.keys(all.paths)).toHaveLength(3);
  });
});
