import { randomUUID } from 'node:crypto';
import type {
  RecordSettlementDto as RecordSettlementRequest,
  SettlementAllocationDto as AllocationInput,
} from '../../libs/sdk/src';

export type { AllocationInput };

/**
 * Test data for `POST /v1/settlements/create`:
 * `aSettlement().allocating(invoice.id, 12100).withFee(150).build()`. Each builder has its own
 * payout id unless `forPayout` names one. Typed by the SDK's request type; `with`/`without` may
 * also make a body the API must refuse.
 */
export class SettlementBuilder {
  private body: Record<string, unknown> = {
    payoutId: `po_${randomUUID()}`,
    currency: 'EUR',
    paidAt: '2026-11-30T10:00:00Z',
    allocations: [] as AllocationInput[],
  };

  forPayout(payoutId: string): this {
    this.body.payoutId = payoutId;
    return this;
  }

  withFee(feeAmount: number): this {
    this.body.feeAmount = feeAmount;
    return this;
  }

  allocating(invoiceId: string, amount: number): this {
    (this.body.allocations as AllocationInput[]).push({ invoiceId, amount });
    return this;
  }

  with(fields: Record<string, unknown>): this {
    this.body = { ...this.body, ...fields };
    return this;
  }

  without(field: string): this {
    const { [field]: _removed, ...rest } = this.body;
    this.body = rest;
    return this;
  }

  build(): RecordSettlementRequest {
    return {
      ...this.body,
      allocations: [...(this.body.allocations as AllocationInput[])],
    } as RecordSettlementRequest;
  }
}

export function aSettlement(): SettlementBuilder {
  return new SettlementBuilder();
}
