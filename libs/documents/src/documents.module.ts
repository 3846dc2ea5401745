import { Module } from '@nestjs/common';
import { LedgerModule } from '@ledgerkey/ledger';
import { OutboxModule } from '@ledgerkey/outbox';
import { DocumentRecorder } from './document-recorder';

@Module({
  imports: [LedgerModule, OutboxModule],
  providers: [DocumentRecorder],
  exports: [DocumentRecorder],
})
export class DocumentsModule {}
