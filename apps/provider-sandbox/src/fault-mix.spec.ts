import { FaultMixError, formatFaultMix, NO_FAULTS, parseFaultMix } from './fault-mix';
import { Faults } from './sandbox-faults';

describe('parseFaultMix', () => {
  it('reads every setting of the documented example', () => {
    expect(
      parseFaultMix(
        'error=0.1,timeout=0.05,lost_response=0.1,duplicate_webhook=0.2,reorder_webhooks=true,webhook_delay_ms=250',
      ),
    ).toEqual({
      error: 0.1,
      timeout: 0.05,
      lostResponse: 0.1,
      duplicateWebhook: 0.2,
      reorderWebhooks: true,
      webhookDelayMs: 250,
    });
  });

  it('treats empty text as no faults and allows spaces around parts', () => {
    expect(parseFaultMix('')).toEqual(NO_FAULTS);
    expect(parseFaultMix(' error = 1 , reorder_webhooks=false ')).toEqual({ ...NO_FAULTS, error: 1 });
  });

  it.each([
    ['unknown name', 'errors=0.1', 'unknown fault "errors"'],
    ['a name twice', 'error=0.1,error=0.2', '"error" is given twice'],
    ['no value', 'error', '"error" is not name=value'],
    ['a trailing comma', 'error=0.1,', '"" is not name=value'],
    ['a probability above 1', 'timeout=1.5', 'timeout must be a probability from 0 to 1'],
    ['a negative probability', 'lost_response=-0.1', 'lost_response must be a probability'],
    ['a percentage', 'error=10%', 'error must be a probability'],
    ['request faults above 1 together', 'error=0.5,timeout=0.3,lost_response=0.3', 'must not exceed 1'],
    ['a boolean that is not true/false', 'reorder_webhooks=yes', 'reorder_webhooks must be true or false'],
    ['a delay that is not an integer', 'webhook_delay_ms=1.5', 'webhook_delay_ms must be an integer'],
    ['a delay too long', 'webhook_delay_ms=600001', 'webhook_delay_ms must be an integer'],
  ])('refuses %s, naming the part', (_case, text, message) => {
    expect(() => parseFaultMix(text)).toThrow(FaultMixError);
    expect(() => parseFaultMix(text)).toThrow(message);
  });

  it('formats a mix back into the same text (settings that differ from none only)', () => {
    const text = 'error=0.1,lost_response=0.2,reorder_webhooks=true';
    expect(formatFaultMix(parseFaultMix(text))).toBe(text);
    expect(formatFaultMix(NO_FAULTS)).toBe('');
  });
});

describe('Faults (seeded draws)', () => {
  const draws = (faults: Faults, count: number): Array<string | null> =>
    Array.from({ length: count }, () => faults.drawRequestFault());

  it('draws the same faults for the same seed, and other faults for another seed', () => {
    const mix = parseFaultMix('error=0.2,timeout=0.2,lost_response=0.2');
    const first = draws(new Faults(mix, 42), 200);
    expect(draws(new Faults(mix, 42), 200)).toEqual(first);
    expect(draws(new Faults(mix, 43), 200)).not.toEqual(first);
  });

  it('injects each request fault at about its rate', () => {
    const all = draws(new Faults(parseFaultMix('error=0.1,timeout=0.2,lost_response=0.3'), 7), 10_000);
    const share = (fault: string | null): number =>
      all.filter((drawn) => drawn === fault).length / all.length;
    expect(share('error')).toBeCloseTo(0.1, 1);
    expect(share('timeout')).toBeCloseTo(0.2, 1);
    expect(share('lost_response')).toBeCloseTo(0.3, 1);
    expect(share(null)).toBeCloseTo(0.4, 1);
  });

  it('draws nothing with no faults, and always the fault whose rate is 1', () => {
    expect(draws(new Faults(NO_FAULTS, 1), 100).every((drawn) => drawn === null)).toBe(true);
    expect(
      draws(new Faults(parseFaultMix('lost_response=1'), 1), 100).every((drawn) => drawn === 'lost_response'),
    ).toBe(true);
  });

  it('keeps request draws independent of webhook draws', () => {
    const mix = parseFaultMix('error=0.5,duplicate_webhook=0.5,reorder_webhooks=true');
    const quiet = new Faults(mix, 9);
    const busy = new Faults(mix, 9);
    const expected = draws(quiet, 50);
    const actual = Array.from({ length: 50 }, () => {
      busy.eventCopies();
      busy.firstAttemptDelayMs();
      return busy.drawRequestFault();
    });
    expect(actual).toEqual(expected);
  });

  it('re-seeds when the mix is set with a seed', () => {
    const mix = parseFaultMix('error=0.5');
    const faults = new Faults(mix, 5);
    const first = draws(faults, 20);
    faults.set(mix, 5);
    expect(draws(faults, 20)).toEqual(first);
  });
});
