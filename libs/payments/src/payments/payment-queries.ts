import { Injectable } from '@nestjs/common';
import { PaymentNotFoundError } from '../payments.errors';
import type { PaymentListView, PaymentView } from './payment.view';
import { PaymentsRepository } from './payments.repository';

/** Read side of payments, always within one company. */
@Injectable()
export class PaymentQueries {
  constructor(private readonly payments: PaymentsRepository) {}

  /** @throws PaymentNotFoundError when the id is unknown in this company (also another company's id) */
  async get(companyId: string, paymentId: string): Promise<PaymentView> {
    const payment = await this.payments.findById(companyId, paymentId);
    if (!payment) throw new PaymentNotFoundError(paymentId);
    return payment;
  }

  /** In creation order; only the invoice's payments when `invoiceId` is given. */
  async list(
    companyId: string,
    limit: number,
    startingAfter?: string,
    invoiceId?: string,
  ): Promise<PaymentListView> {
    return { object: 'list', ...(await this.payments.list(companyId, limit, startingAfter, invoiceId)) };
  }
}
