import { ApiProperty } from '@nestjs/swagger';
import { Account } from './accounts';

const ACCOUNT_CODES = Object.values(Account);

export class JournalLineView {
  @ApiProperty({ enum: ACCOUNT_CODES, example: 'accounts_receivable' }) account: string;
  @ApiProperty({ type: 'integer', description: 'Minor units', example: 12100 }) debit: number;
  @ApiProperty({ type: 'integer', description: 'Minor units', example: 0 }) credit: number;
}

/** A balanced double-entry posting, as `GET /v1/ledger/entries` lists it. */
export class JournalEntryView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['journal_entry'] }) object: 'journal_entry';
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: 'invoice', description: 'The kind of document that posted the entry' })
  sourceType: string;
  @ApiProperty({ format: 'uuid', description: 'The id of that document' }) sourceId: string;
  @ApiProperty({ example: 'Invoice INV-000001' }) memo: string;
  @ApiProperty({ format: 'date-time' }) postedAt: string;
  @ApiProperty({
    format: 'date',
    example: '2026-11-30',
    description:
      "The date of the document the entry records (an invoice's or purchase invoice's issue date, a payout's date, else the posting's UTC date): reports by date select on it",
  })
  entryDate: string;
  @ApiProperty({ type: [JournalLineView] }) lines: JournalLineView[];
}

export class JournalEntryListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [JournalEntryView] }) data: JournalEntryView[];
  @ApiProperty() hasMore: boolean;
}

/**
 * An aggregate across documents: integer minor units as a decimal string ("18000000000000001"),
 * like int64 in the proto3 JSON mapping. Sums of many amounts can pass 2^53 − 1, where a JSON
 * number stops being exact in JavaScript; a string always, so the type never depends on the value.
 */
function AggregateAmount(description: string, example: string): PropertyDecorator {
  return ApiProperty({
    type: 'string',
    format: 'int64',
    pattern: AGGREGATE_AMOUNT_PATTERN,
    description: `${description}: integer minor units as a decimal string (exact beyond 2^53)`,
    example,
  });
}

const AGGREGATE_AMOUNT_PATTERN = '^-?[0-9]+$';

export class TrialBalanceRow {
  @ApiProperty({ enum: ACCOUNT_CODES, example: 'revenue' }) account: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @AggregateAmount('Sum of the debits', '0') debitTotal: string;
  @AggregateAmount('Sum of the credits', '10000') creditTotal: string;
  @AggregateAmount('debitTotal − creditTotal', '-10000') balance: string;
}

export class TrialBalanceTotalView {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @AggregateAmount('Sum of all debits in the currency', '12100') debitTotal: string;
  @AggregateAmount('Sum of all credits in the currency', '12100') creditTotal: string;
  @ApiProperty({ description: 'Debits equal credits: always true', example: true }) balanced: boolean;
}

export class TrialBalanceView {
  @ApiProperty({ enum: ['trial_balance'] }) object: 'trial_balance';
  @ApiProperty({ type: [TrialBalanceRow] }) data: TrialBalanceRow[];
  @ApiProperty({ type: [TrialBalanceTotalView] }) totals: TrialBalanceTotalView[];
}
