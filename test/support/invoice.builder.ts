import { randomUUID } from 'node:crypto';
import type { InvoiceLineDto as LineInput, IssueInvoiceDto as IssueInvoiceRequest } from '../../libs/sdk/src';

export type { LineInput };

/**
 * Test data for `POST /v1/sales/invoices/create`: `anInvoice().withLine(...).build()`, typed by
 * the SDK's request type. `with`/`without` may also make a body the API must refuse.
 */
export class InvoiceBuilder {
  private body: Record<string, unknown> = {
    customer: { name: 'UAB Pirkėjas', countryCode: 'LT', vatId: 'LT100001234567' },
    lines: [] as LineInput[],
  };

  withOrderId(orderId: string = `order-${randomUUID()}`): this {
    this.body.orderId = orderId;
    return this;
  }

  withLine(line: Partial<LineInput> = {}): this {
    (this.body.lines as LineInput[]).push({
      description: 'Consulting',
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

  build(): IssueInvoiceRequest {
    const lines = this.body.lines as LineInput[];
    return {
      ...this.body,
      lines:
        lines.length > 0
          ? lines
          : [{ description: 'Consulting', quantity: '2', unitPrice: 5000, vatRate: '21' }],
    } as IssueInvoiceRequest;
  }
}

export function anInvoice(): InvoiceBuilder {
  return new InvoiceBuilder();
}

export function newKey(prefix = 'test'): string {
  return `${prefix}-${randomUUID()}`;
}
