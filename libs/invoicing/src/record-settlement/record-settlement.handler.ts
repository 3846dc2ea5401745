import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { metadataOf, Transactional } from '@ledgerkey/database';
import { DocumentRecorder } from '@ledgerkey/documents';
import { providerPayoutPosting, settlementPosting } from '@ledgerkey/ledger';
import { AmountOutOfRangeError } from '@ledgerkey/money';
import {
  AllocationExceedsOutstandingError,
  InvoiceNotFoundError,
  PayoutAlreadySettledError,
} from '../invoicing.errors';
import { InvoicesRepository, type LockedInvoice } from '../invoices/invoices.repository';
import type { SettlementSource, SettlementView } from '../settlements/settlement.view';
import { SettlementsRepository } from '../settlements/settlements.repository';
import {
  type RecordSettlementCommand,
  type RecordSettlementDto,
  type SettlingCompany,
  toRecordSettlementCommand,
} from './record-settlement.dto';

/** A payout the payment provider reports, in invoice terms (see `importPayout`). */
export interface ImportedPayout {
  payoutId: string;
  currency: string;
  /** ISO 8601 */
  paidAt: string;
  feeAmount: number;
  /** What the payout pays per invoice (several entries of one invoice are added up). */
  allocations: Array<{ invoiceId: string; amount: number }>;
}

@Injectable()
export class RecordSettlementHandler {
  constructor(
    private readonly settlements: SettlementsRepository,
    private readonly invoices: InvoicesRepository,
    private readonly recorder: DocumentRecorder,
  ) {}

  /**
   * Records a provider payout against sales invoices: the settlement and its allocations, the
   * invoices' paid totals and one balanced journal entry (bank, payment fees, receivables), all
   * in the caller's transaction (or a new one).
   * @throws PayoutAlreadySettledError when the payout already has a settlement
   * @throws InvoiceNotFoundError when an allocated invoice is unknown in this company
   * @throws AllocationExceedsOutstandingError when an allocation is in another currency than its
   *   invoice or above its outstanding amount (gross − credited − paid − the invoice's payments
   *   still processing, which may yet succeed and need it)
   * @throws AmountOutOfRangeError when the allocated total would exceed the supported range
   */
  @Transactional()
  async execute(
    company: SettlingCompany,
    dto: RecordSettlementDto,
    now = new Date(),
  ): Promise<SettlementView> {
    return this.book(toRecordSettlementCommand(dto, company), 'api', now);
  }

  /**
   * The same use case for a payout the payment provider reports (`payout.paid`, or found by a
   * reconciliation run): `payoutId` stays the business key, so a payout pushed with POST
   * /v1/settlements/create and the same payout imported never both book. The allocations are the
   * invoices of the payments the payout pays out (what the provider counted per invoice); those
   * payments already credited receivables and raised paidTotal, so this settlement credits provider
   * clearing instead and changes no paid total.
   * @throws PayoutAlreadySettledError when the payout already has a settlement (pushed or imported)
   * @throws InvoiceNotFoundError when an allocated invoice is unknown in this company
   * @throws AllocationExceedsOutstandingError when an invoice is in another currency than the payout
   */
  @Transactional()
  async importPayout(companyId: string, payout: ImportedPayout, now = new Date()): Promise<SettlementView> {
    const amounts = new Map<string, number>();
    for (const allocation of payout.allocations) {
      amounts.set(allocation.invoiceId, (amounts.get(allocation.invoiceId) ?? 0) + allocation.amount);
    }
    const command: RecordSettlementCommand = {
      companyId,
      payoutId: payout.payoutId,
      currency: payout.currency,
      paidAt: new Date(payout.paidAt).toISOString(),
      feeAmount: payout.feeAmount,
      allocations: [...amounts]
        .map(([invoiceId, amount]) => ({ invoiceId, amount }))
        .sort((a, b) => (a.invoiceId < b.invoiceId ? -1 : a.invoiceId > b.invoiceId ? 1 : 0)),
    };
    return this.book(command, 'provider', now);
  }

  private async book(
    command: RecordSettlementCommand,
    source: SettlementSource,
    now: Date,
  ): Promise<SettlementView> {
    const companyId = command.companyId;
    // Cheap early answer (also long after the key expired); the unique constraint decides races below.
    await this.assertPayoutNotSettled(companyId, command.payoutId);

    // Row locks until COMMIT, in id order (no deadlocks): concurrent settlements and credit notes
    // of these invoices queue here, so the outstanding amounts checked below stay true until our
    // paid totals are written.
    const locked = await this.invoices.lockForUpdate(
      companyId,
      command.allocations.map((allocation) => allocation.invoiceId),
    );
    // A pushed settlement may not take what processing payments still need; an imported payout
    // pays out payments that already succeeded, so nothing is held back for it.
    const processing =
      source === 'api'
        ? await this.invoices.processingPaymentTotals(
            companyId,
            locked.map((invoice) => invoice.id),
          )
        : new Map<string, number>();
    const rejection = allocationRejection(command, locked, source, processing);
    if (rejection !== null) {
      // While we waited for the locks a concurrent settlement of this same payout may have used
      // up the outstanding amounts: then the payout conflict is the true answer.
      await this.assertPayoutNotSettled(companyId, command.payoutId);
      throw rejection;
    }

    const numbers = new Map(locked.map((invoice) => [invoice.id, invoice.number]));
    const allocatedTotal = sumOfAllocations(command);
    const settlement: SettlementView = {
      id: randomUUID(),
      object: 'settlement',
      payoutId: command.payoutId,
      currency: command.currency,
      paidAt: command.paidAt,
      feeAmount: command.feeAmount,
      allocatedTotal,
      netAmount: allocatedTotal - command.feeAmount,
      allocations: command.allocations.map((allocation) => ({
        invoiceId: allocation.invoiceId,
        invoiceNumber: numbers.get(allocation.invoiceId) as string,
        amount: allocation.amount,
      })),
      source,
      metadata: metadataOf(command.metadata),
      createdAt: now.toISOString(),
    };
    return this.recorder.record(
      companyId,
      () => this.insert(companyId, settlement),
      () => ({
        memo: `Settlement of payout ${settlement.payoutId}`,
        // The payout's date (UTC) is the settlement's document date.
        entryDate: new Date(settlement.paidAt).toISOString().slice(0, 10),
        lines: source === 'api' ? settlementPosting(settlement) : providerPayoutPosting(settlement),
      }),
    );
  }

  /** @throws PayoutAlreadySettledError when a concurrent settlement took the payout first */
  private async insert(companyId: string, settlement: SettlementView): Promise<SettlementView> {
    if (!(await this.settlements.insert(companyId, settlement))) {
      await this.assertPayoutNotSettled(companyId, settlement.payoutId);
      throw new Error('settlement insert reported a conflict but no settlement holds the payout');
    }
    // An imported payout pays out payments that already raised the paid totals.
    if (settlement.source === 'provider') return settlement;
    // Under the locks taken in book; ck_invoices_paid (paid ≤ gross) backs the check up in the schema.
    for (const allocation of settlement.allocations) {
      await this.invoices.addToRunningTotals(companyId, allocation.invoiceId, { paid: allocation.amount });
    }
    return settlement;
  }

  private async assertPayoutNotSettled(companyId: string, payoutId: string): Promise<void> {
    const existingSettlementId = await this.settlements.findIdByPayout(companyId, payoutId);
    if (existingSettlementId !== null) throw new PayoutAlreadySettledError(payoutId, existingSettlementId);
  }
}

/**
 * The first reason the locked invoices cannot take the allocations, or null. Unknown invoices
 * are reported before amounts, so the answer does not depend on the allocations' order.
 */
function allocationRejection(
  command: RecordSettlementCommand,
  locked: readonly LockedInvoice[],
  source: SettlementSource,
  processing: ReadonlyMap<string, number>,
): Error | null {
  const invoices = new Map(locked.map((invoice) => [invoice.id, invoice]));
  const unknown = command.allocations.find((allocation) => !invoices.has(allocation.invoiceId));
  if (unknown !== undefined) return new InvoiceNotFoundError(unknown.invoiceId);
  for (const allocation of command.allocations) {
    const invoice = invoices.get(allocation.invoiceId) as LockedInvoice;
    if (invoice.currency !== command.currency) {
      return AllocationExceedsOutstandingError.currencyMismatch(invoice, command.currency);
    }
    const held = processing.get(invoice.id) ?? 0;
    if (
      source === 'api' &&
      allocation.amount > invoice.grossTotal - invoice.creditedTotal - invoice.paidTotal - held
    ) {
      return AllocationExceedsOutstandingError.aboveOutstanding(invoice, allocation.amount, held);
    }
  }
  return null;
}

/** @throws AmountOutOfRangeError when the total is not a safe integer (100 × 10^15 would not be) */
function sumOfAllocations(command: RecordSettlementCommand): number {
  const total = command.allocations.reduce((sum, allocation) => sum + BigInt(allocation.amount), 0n);
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new AmountOutOfRangeError(`allocated total ${total} exceeds Number.MAX_SAFE_INTEGER`);
  }
  return Number(total);
}
