import { randomUUID } from 'node:crypto';
import type { RecordPurchaseInvoiceDto as RecordPurchaseInvoiceRequest } from '../../libs/sdk/src';
import type { LineInput } from './invoice.builder';

/**
 * Test data for `POST /v1/purchases/invoices/create`:
 * `aPurchaseInvoice().withDocumentNumber('INV001').withLine(...).build()`. Every builder starts
 * with a fresh document number, so two builds are two supplier documents unless told otherwise.
 * Typed by the SDK's request type; `with`/`without` may also make a body the API must refuse.
 */
export class PurchaseInvoiceBuilder {
  private body: Record<string, unknown> = {
    documentNumber: `TK-${randomUUID()}`,
    supplier: { name: 'UAB Tiekėjas', countryCode: 'LT', vatId: 'LT100009876543' },
    issueDate: '2026-11-30',
    lines: [] as LineInput[],
  };

  withDocumentNumber(documentNumber: string): this {
    this.body.documentNumber = documentNumber;
    return this;
  }

  withSupplier(supplier: Record<string, unknown>): this {
    this.body.supplier = supplier;
    return this;
  }

  withLine(line: Partial<LineInput> = {}): this {
    (this.body.lines as LineInput[]).push({
      description: 'Office supplies',
      quantity: '2',
      unitPrice: 5000,
      vatRate: '21',
      ...line,
    });
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

  build(): RecordPurchaseInvoiceRequest {
    const lines = this.body.lines as LineInput[];
    return {
      ...this.body,
      lines:
        lines.length > 0
          ? lines
          : [{ description: 'Office supplies', quantity: '2', unitPrice: 5000, vatRate: '21' }],
    } as RecordPurchaseInvoiceRequest;
  }
}

export function aPurchaseInvoice(): PurchaseInvoiceBuilder {
  return new PurchaseInvoiceBuilder();
}
