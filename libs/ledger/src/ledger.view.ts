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
  @ApiProperty({ type: [JournalLineView] }) lines: JournalLineView[];
}

export class JournalEntryListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [JournalEntryView] }) data: JournalEntryView[];
  @ApiProperty() hasMore: boolean;
}

export class TrialBalanceRow {
  @ApiProperty({ enum: ACCOUNT_CODES, example: 'revenue' }) account: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ type: 'integer', example: 0 }) debitTotal: number;
  @ApiProperty({ type: 'integer', example: 10000 }) creditTotal: number;
  @ApiProperty({ type: 'integer', description: 'debitTotal − creditTotal', example: -10000 })
  balance: number;
}

export class TrialBalanceTotalView {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ type: 'integer', example: 12100 }) debitTotal: number;
  @ApiProperty({ type: 'integer', example: 12100 }) creditTotal: number;
  @ApiProperty({ description: 'Debits equal credits: always true', example: true }) balanced: boolean;
}

export class TrialBalanceView {
  @ApiProperty({ enum: ['trial_balance'] }) object: 'trial_balance';
  @ApiProperty({ type: [TrialBalanceRow] }) data: TrialBalanceRow[];
  @ApiProperty({ type: [TrialBalanceTotalView] }) totals: TrialBalanceTotalView[];
}
