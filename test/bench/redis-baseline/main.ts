/**
 * The bench's Redis baseline: the setup a NestJS team would reach for to make an invoice
 * endpoint idempotent — `@node-idempotency/nestjs` with its Redis storage in front of an
 * ordinary Nest + TypeORM create (gapless number, invoice and lines, journal entry, event, all
 * in one PostgreSQL transaction). Started by `npm run bench`; not part of the product.
 */
import 'reflect-metadata';
import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { loadBaselineConfig } from './baseline-config';

async function main(): Promise<void> {
  const config = loadBaselineConfig(process.env);
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: ['error', 'warn'] });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  console.log(`redis baseline listening on http://${config.host}:${config.port}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
