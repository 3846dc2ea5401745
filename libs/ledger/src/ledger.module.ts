import { Module } from '@nestjs/common';
import { JournalRepository } from './journal.repository';

@Module({ providers: [JournalRepository], exports: [JournalRepository] })
export class LedgerModule {}
