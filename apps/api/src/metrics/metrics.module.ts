import { Module } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { DeliveryMetrics } from './delivery.metrics';
import { HttpMetrics } from './http.metrics';
import { IdempotencyMetrics } from './idempotency.metrics';
import { MetricsController } from './metrics.controller';
import { PaymentMetrics } from './payment.metrics';

/**
 * GET /metrics and the metrics behind it. Each application has its own registry (not
 * prom-client's global one), so tests can run several applications in one process.
 */
@Module({
  controllers: [MetricsController],
  providers: [
    {
      provide: Registry,
      useFactory: () => {
        const registry = new Registry();
        collectDefaultMetrics({ register: registry });
        return registry;
      },
    },
    IdempotencyMetrics,
    HttpMetrics,
    DeliveryMetrics,
    PaymentMetrics,
  ],
  exports: [IdempotencyMetrics, HttpMetrics, PaymentMetrics],
})
export class MetricsModule {}
