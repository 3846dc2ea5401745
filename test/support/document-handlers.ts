import { randomUUID } from 'node:crypto';
import type { Type } from '@nestjs/common';
import { type ClassConstructor, plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { InvoicingModule } from '@ledgerkey/invoicing';
import { PurchasingModule } from '@ledgerkey/purchasing';
import { CreateCompanyHandler, TenancyModule } from '@ledgerkey/tenancy';
import { type HandlerContext, startHandlerContext } from './handler-context';

/** What the document handlers take of the authenticated company. */
export interface TestTenant {
  id: string;
  currency: string;
}

export interface PostedLine {
  account: string;
  debit: number;
  credit: number;
}

/** The handler tier of the documents: invoicing, purchasing and tenancy on the test database. */
export class DocumentHandlers {
  context: HandlerContext | undefined;

  private get ctx(): HandlerContext {
    if (!this.context) throw new Error('useDocumentHandlers() starts the context in beforeAll');
    return this.context;
  }

  /** A handler or query of the libs under test. */
  get<T>(type: Type<T>): T {
    return this.ctx.app.get(type);
  }

  /** Rows read outside the code under test. */
  async query<Row>(sql: string, parameters: unknown[] = []): Promise<Row[]> {
    return (await this.ctx.db.query(sql, parameters)).rows as Row[];
  }

  /** A fresh company, made by tenancy's own use case: tests never share a tenant. */
  async newTenant(currency = 'EUR'): Promise<TestTenant> {
    const { companyId } = await this.get(CreateCompanyHandler).execute({
      name: `Company ${randomUUID()}`,
      countryCode: 'LT',
      currency,
    });
    return { id: companyId, currency };
  }

  /** The journal lines a document posted (none when it posted nothing), in line order. */
  journalOf(companyId: string, sourceId: string): Promise<PostedLine[]> {
    return this.query<PostedLine>(
      `SELECT l.account, l.debit::float8 AS debit, l.credit::float8 AS credit
         FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
        WHERE e.company_id = $1 AND e.source_id = $2
        ORDER BY l.line_no`,
      [companyId, sourceId],
    );
  }

  /** The events the company's documents appended, oldest first, with the document they carry. */
  eventsOf(companyId: string): Promise<Array<{ type: string; object: unknown }>> {
    return this.query(
      `SELECT type, data->'object' AS object FROM events WHERE company_id = $1 ORDER BY position`,
      [companyId],
    );
  }
}

/** The file's handler tier: started before its tests, closed after them (one per test file). */
export function useDocumentHandlers(): DocumentHandlers {
  const tier = new DocumentHandlers();
  beforeAll(async () => {
    tier.context = await startHandlerContext([TenancyModule, InvoicingModule, PurchasingModule]);
  });
  afterAll(async () => {
    await tier.context?.close();
  });
  return tier;
}

/**
 * A request body as a handler receives it from the API: transformed (decimals made canonical)
 * and validated as strictly as the application's ValidationPipe does.
 * @throws Error when the body would not pass validation (the test data is wrong)
 */
export function validatedBody<T extends object>(type: ClassConstructor<T>, body: object): T {
  const instance = plainToInstance(type, body, { enableImplicitConversion: false });
  const errors = validateSync(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
  });
  if (errors.length > 0) throw new Error(`invalid test body: ${errors.map(String).join('; ')}`);
  return instance;
}

/** Settles every promise and splits the outcomes: what a batch of concurrent calls did. */
export async function outcomesOf<T>(
  calls: Array<Promise<T>>,
): Promise<{ fulfilled: T[]; rejected: unknown[] }> {
  const settled = await Promise.allSettled(calls);
  return {
    fulfilled: settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])),
    rejected: settled.flatMap((outcome) =>
      outcome.status === 'rejected' ? [outcome.reason as unknown] : [],
    ),
  };
}
