import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import type { DocumentType } from './document-number';

@Injectable()
export class DocumentSequenceRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /**
   * Takes the next number of a (company, document type, series) sequence. Gapless because it
   * is a counter row updated in the caller's transaction: a rollback un-takes the number, and
   * the row lock makes concurrent issuers of one series wait for each other until commit
   * (PostgreSQL SEQUENCEs are not used: they leave gaps on rollback). Callers take the number
   * as late as possible so that lock is held briefly.
   */
  @Transactional(Propagation.Mandatory)
  async next(companyId: string, documentType: DocumentType, series: string): Promise<number> {
    const [row] = await this.txHost.tx.query<{ last_value: string }>(nextSequenceValueSql('$1', '$2', '$3'), [
      companyId,
      documentType,
      series,
    ]);
    return Number(row.last_value);
  }
}

/**
 * The statement that takes a sequence's next value (`RETURNING last_value`), for `next` and for a
 * document's INSERT that takes its number in the same statement (a data-modifying CTE): the
 * counter row's lock is then taken by the statement that stores the document, a round trip later
 * than `next` would take it. The document type is part of the key: invoices and credit notes never
 * share a counter.
 */
export function nextSequenceValueSql(company: string, documentType: string, series: string): string {
  return `INSERT INTO document_sequences AS s (company_id, document_type, series, last_value)
          VALUES (${company}, ${documentType}, ${series}, 1)
          ON CONFLICT (company_id, document_type, series) DO UPDATE SET last_value = s.last_value + 1
          RETURNING last_value`;
}
