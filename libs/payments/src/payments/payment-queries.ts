import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import { PaymentNotFoundError } from '../payments.errors';
import type { PaymentListView, PaymentView } from './payment.view';
import { type PaymentListFilter, PaymentsRepository } from './payments.repository';

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

  /** In creation order (or its reverse), of the payments matching `filter`. */
  async list(companyId: string, page: PageRequest, filter?: PaymentListFilter): Promise<PaymentListView> {
    return { object: 'list', ...(await this.payments.list(companyId, page, filter)) };
  }
}
