import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NodeIdempotencyModule, StorageAdapterEnum } from '@node-idempotency/nestjs';
import { BASELINE_CONFIG, type BaselineConfig } from './baseline-config';
import { AdminTokenGuard } from './companies/admin-token.guard';
import { ApiKeyGuard } from './companies/api-key.guard';
import { CompaniesController } from './companies/companies.controller';
import { Company } from './companies/company.entity';
import { OutboxEvent } from './events/outbox-event.entity';
import { DocumentSequence } from './invoices/document-sequence.entity';
import { Invoice, InvoiceLine } from './invoices/invoice.entity';
import { InvoicesController } from './invoices/invoices.controller';
import { InvoicesService } from './invoices/invoices.service';
import { JournalEntry, JournalLine } from './ledger/journal-entry.entity';

const ENTITIES = [Company, DocumentSequence, Invoice, InvoiceLine, JournalEntry, JournalLine, OutboxEvent];

/** "The usual NestJS setup": Nest + TypeORM in PostgreSQL, @node-idempotency/nestjs in Redis. */
@Module({})
export class AppModule {
  static forRoot(config: BaselineConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: config.databaseUrl,
          entities: ENTITIES,
          synchronize: false,
          installExtensions: false,
          extra: { max: config.poolSize },
        }),
        TypeOrmModule.forFeature([Company]),
        NodeIdempotencyModule.forRootAsync({
          storage: { adapter: StorageAdapterEnum.redis, options: { url: config.redisUrl } },
          cacheKeyPrefix: config.redisKeyPrefix,
          cacheTTLMS: 24 * 60 * 60 * 1000,
        }),
      ],
      controllers: [CompaniesController, InvoicesController],
      providers: [
        { provide: BASELINE_CONFIG, useValue: config },
        AdminTokenGuard,
        ApiKeyGuard,
        InvoicesService,
      ],
    };
  }
}
