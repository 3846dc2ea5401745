import type {
  ChargeOutcome,
  ChargeRequest,
  PaymentProvider,
  ProviderCallOptions,
  ProviderListRange,
  ProviderReadOptions,
  RefundOutcome,
  RefundRequest,
} from './payment-provider';
import {
  PaymentProviderAmbiguousReferenceError,
  PaymentProviderUnavailableError,
} from './payment-provider.errors';
import type { PaymentsObserver } from './payments.observer';
import type { ProviderCharge, ProviderPayout } from './provider-objects';

/** A provider whose charge calls and lookups are timed and counted by outcome (metrics). */
export class ObservedPaymentProvider implements PaymentProvider {
  readonly name: string;

  constructor(
    private readonly provider: PaymentProvider,
    private readonly observer: PaymentsObserver,
  ) {
    this.name = provider.name;
  }

  async createCharge(request: ChargeRequest, options: ProviderCallOptions): Promise<ChargeOutcome> {
    const started = process.hrtime.bigint();
    const outcome = await this.provider.createCharge(request, options);
    this.observer.providerCall(
      'create_charge',
      outcome.kind === 'unknown' ? outcome.reason : outcome.kind,
      secondsSince(started),
    );
    return outcome;
  }

  async findChargeByReference(
    reference: string,
    options?: ProviderReadOptions,
  ): Promise<ProviderCharge | null> {
    const started = process.hrtime.bigint();
    try {
      const charge = await this.provider.findChargeByReference(reference, options);
      this.observer.providerCall('find_charge', charge ? 'found' : 'not_found', secondsSince(started));
      return charge;
    } catch (error) {
      const outcome =
        error instanceof PaymentProviderAmbiguousReferenceError
          ? 'ambiguous'
          : error instanceof PaymentProviderUnavailableError
            ? 'unavailable'
            : 'refused';
      this.observer.providerCall('find_charge', outcome, secondsSince(started));
      throw error;
    }
  }

  listCharges(range: ProviderListRange, options?: ProviderReadOptions): AsyncIterable<ProviderCharge> {
    return this.provider.listCharges(range, options);
  }

  listPayouts(range: ProviderListRange, options?: ProviderReadOptions): AsyncIterable<ProviderPayout> {
    return this.provider.listPayouts(range, options);
  }

  refundCharge(request: RefundRequest, options: ProviderCallOptions): Promise<RefundOutcome> {
    return this.provider.refundCharge(request, options);
  }
}

function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}
