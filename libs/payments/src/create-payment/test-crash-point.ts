import type { PaymentCrashPoint } from '../payments-config';

/**
 * Crash tests only (PAYMENT_TEST_CRASH_POINT, refused at boot unless NODE_ENV=test): the process
 * SIGKILLs itself when a payment reaches the configured point, so a test crashes it at an exact
 * place — between two commits, around the provider call — instead of racing a kill against it.
 */
export class TestCrashPoint {
  constructor(private readonly point: PaymentCrashPoint | undefined) {}

  /** Never returns when `point` is the configured one. */
  async reach(point: PaymentCrashPoint): Promise<void> {
    if (this.point !== point) return;
    process.kill(process.pid, 'SIGKILL');
    // SIGKILL is not handled: this process ends here.
    await new Promise<never>(() => undefined);
  }
}
