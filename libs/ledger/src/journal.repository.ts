import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  type DeferredWrite,
  DeferredWrites,
  type Page,
  type PageRequest,
  Propagation,
  TenantReader,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import { balancedLines, type JournalEntryDraft } from './journal-entry';
import type {
  JournalEntryView,
  TrialBalanceRow,
  TrialBalanceTotalView,
  TrialBalanceView,
} from './ledger.view';

interface EntryRow {
  id: string;
  currency: string;
  source_type: string;
  source_id: string;
  memo: string;
  posted_at: Date;
  entry_date: string;
  lines: Array<{ account: string; debit: string; credit: string }>;
}

const SELECT_ENTRY = `
  SELECT e.id, e.currency, e.source_type, e.source_id, e.memo, e.posted_at,
         to_char(e.entry_date, 'YYYY-MM-DD') AS entry_date,
         (SELECT json_agg(json_build_object('account', l.account, 'debit', l.debit::text,
                                            'credit', l.credit::text) ORDER BY l.line_no)
            FROM journal_lines l WHERE l.company_id = e.company_id AND l.entry_id = e.id) AS lines
    FROM journal_entries e`;

function toView(row: EntryRow): JournalEntryView {
  return {
    id: row.id,
    object: 'journal_entry',
    currency: row.currency,
    sourceType: row.source_type,
    sourceId: row.source_id,
    memo: row.memo,
    postedAt: row.posted_at.toISOString(),
    entryDate: row.entry_date,
    lines: row.lines.map((line) => ({
      account: line.account,
      debit: Number(line.debit),
      credit: Number(line.credit),
    })),
  };
}

/** Keyset order seq: posting order, unique. */
const JOURNAL_ENTRIES = new TenantReader('journal_entries', 'e', SELECT_ENTRY, ['seq'], toView);

@Injectable()
export class JournalRepository {
  constructor(
    private readonly txHost: TransactionHost<PgTransactionalAdapter>,
    private readonly writes: DeferredWrites,
  ) {}

  /**
   * Posts an entry. Mandatory transaction: a posting must commit with its document or not at
   * all. Entry and lines go in one statement; the deferred trigger re-checks the balance.
   * A document worth nothing (e.g. a zero-priced invoice) changes no balance and posts nothing.
   * @returns the entry id, or null when there was nothing to post
   */
  @Transactional(Propagation.Mandatory)
  async post(draft: JournalEntryDraft): Promise<string | null> {
    const posting = this.posting(draft);
    if (posting === null) return null;
    await this.writes.write(posting.write);
    return posting.id;
  }

  /**
   * The entry as a write to send with others (`DeferredWrites`): entry and lines. Null when
   * there is nothing to post (see `post`).
   */
  posting(draft: JournalEntryDraft): { id: string; write: DeferredWrite } | null {
    const lines = balancedLines(draft.lines);
    if (lines.length === 0) return null;
    const id = randomUUID();
    const write: DeferredWrite = {
      kind: 'journal_entries',
      ctes: (bind, name) => {
        const company = bind(draft.companyId);
        const accounts = bind(lines.map((line) => line.account));
        return [
          [
            'entry',
            `INSERT INTO journal_entries (id, company_id, currency, source_type, source_id, memo, posted_at,
                                          entry_date, line_count)
             VALUES (${bind(id)}, ${company}, ${bind(draft.currency)}, ${bind(draft.sourceType)},
                     ${bind(draft.sourceId)}, ${bind(draft.memo)}, ${bind(draft.postedAt)},
                     ${bind(draft.entryDate ?? draft.postedAt.toISOString().slice(0, 10))},
                     cardinality(${accounts}::text[]))
             RETURNING id`,
          ],
          [
            'lines',
            `INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit)
             SELECT entry.id, ${company}, l.line_no, l.account, l.debit, l.credit
               FROM ${name('entry')} entry,
                    unnest(${accounts}::text[], ${bind(lines.map((line) => line.debit))}::bigint[],
                           ${bind(lines.map((line) => line.credit))}::bigint[]) WITH ORDINALITY
                      AS l(account, debit, credit, line_no)`,
          ],
        ];
      },
    };
    return { id, write };
  }

  /** Entries in posting order, after the entry `startingAfter` (an entry id of this company). */
  list(companyId: string, page: PageRequest): Promise<Page<JournalEntryView>> {
    return JOURNAL_ENTRIES.list(this.txHost.tx, companyId, page);
  }

  /**
   * Per account and currency, and per currency in total. Summed in SQL (sum of bigint is
   * numeric: exact) and returned as text, never through a JS number.
   */
  async trialBalance(companyId: string): Promise<TrialBalanceView> {
    const rows = await this.txHost.tx.query<{
      account: string | null;
      currency: string;
      debit: string;
      credit: string;
      balance: string;
    }>(
      // GROUPING SETS: the per-currency totals (account NULL) from the same scan as the rows.
      `SELECT e.currency, l.account, sum(l.debit)::text AS debit, sum(l.credit)::text AS credit,
              (sum(l.debit) - sum(l.credit))::text AS balance
         FROM journal_lines l JOIN journal_entries e ON e.company_id = l.company_id AND e.id = l.entry_id
        WHERE l.company_id = $1
        GROUP BY GROUPING SETS ((e.currency, l.account), (e.currency))
        ORDER BY e.currency, l.account`,
      [companyId],
    );
    const data: TrialBalanceRow[] = [];
    const totals: TrialBalanceTotalView[] = [];
    for (const row of rows) {
      if (row.account === null) {
        totals.push({
          currency: row.currency,
          debitTotal: row.debit,
          creditTotal: row.credit,
          balanced: row.balance === '0',
        });
      } else {
        data.push({
          account: row.account,
          currency: row.currency,
          debitTotal: row.debit,
          creditTotal: row.credit,
          balance: row.balance,
        });
      }
    }
    return { object: 'trial_balance', data, totals };
  }
}
