/**
 * The random fault mix (`PROVIDER_SANDBOX_FAULTS`, or `PUT /_sandbox/faults` at run time), e.g.
 * `error=0.1,timeout=0.05,lost_response=0.1,duplicate_webhook=0.2,reorder_webhooks=true`.
 * docs/provider-sandbox.md says what each fault does.
 */
export interface FaultMix {
  /** Share of charge and refund requests answered 500 before anything is done. */
  error: number;
  /** Share held for the timeout hold first (then done and answered, if the client still listens). */
  timeout: number;
  /** Share done and committed, then the connection is destroyed without an answer. */
  lostResponse: number;
  /** Share of webhook events delivered twice (a second delivery after the first succeeded). */
  duplicateWebhook: number;
  /** Events are delivered in a random order (each waits a random 0…delay before its first attempt). */
  reorderWebhooks: boolean;
  /** Delay before an event's first attempt; with reorder, the upper bound of the random delay. */
  webhookDelayMs: number;
}

export const NO_FAULTS: FaultMix = {
  error: 0,
  timeout: 0,
  lostResponse: 0,
  duplicateWebhook: 0,
  reorderWebhooks: false,
  webhookDelayMs: 0,
};

/** With reorder on and no `webhook_delay_ms`, events wait a random 0…1 s. */
export const DEFAULT_REORDER_DELAY_MS = 1000;
const MAX_WEBHOOK_DELAY_MS = 600_000;

type Setting = 'probability' | 'boolean' | 'milliseconds';
const SETTINGS = {
  error: ['error', 'probability'],
  timeout: ['timeout', 'probability'],
  lost_response: ['lostResponse', 'probability'],
  duplicate_webhook: ['duplicateWebhook', 'probability'],
  reorder_webhooks: ['reorderWebhooks', 'boolean'],
  webhook_delay_ms: ['webhookDelayMs', 'milliseconds'],
} as const satisfies Record<string, readonly [keyof FaultMix, Setting]>;
type SettingName = keyof typeof SETTINGS;

/** The text is not a fault mix; the message names the offending part. */
export class FaultMixError extends Error {
  readonly code = 'faults_invalid';
}

/**
 * Parses a fault mix strictly: `name=value` pairs separated by commas, each name known and at most
 * once; probabilities are decimals from 0 to 1 and `error + timeout + lost_response` ≤ 1 (one
 * request meets at most one of them); `reorder_webhooks` is `true` or `false`; `webhook_delay_ms`
 * an integer up to 600000. Empty text is no faults.
 * @throws FaultMixError naming the first bad part
 */
export function parseFaultMix(text: string): FaultMix {
  const mix: FaultMix = { ...NO_FAULTS };
  if (text.trim() === '') return mix;
  const seen = new Set<string>();
  for (const part of text.split(',')) {
    const match = /^\s*([a-z_]+)\s*=\s*(\S+)\s*$/.exec(part);
    if (!match) throw new FaultMixError(`"${part.trim()}" is not name=value`);
    const [, name, value] = match;
    if (!Object.hasOwn(SETTINGS, name)) {
      throw new FaultMixError(`unknown fault "${name}" (known: ${Object.keys(SETTINGS).join(', ')})`);
    }
    if (seen.has(name)) throw new FaultMixError(`"${name}" is given twice`);
    seen.add(name);
    const [field, setting] = SETTINGS[name as SettingName];
    (mix as unknown as Record<string, number | boolean>)[field] = parseValue(name, setting, value);
  }
  const requestFaults = mix.error + mix.timeout + mix.lostResponse;
  if (requestFaults > 1 + 1e-9) {
    throw new FaultMixError(`error + timeout + lost_response must not exceed 1 (got ${requestFaults})`);
  }
  return mix;
}

function parseValue(name: string, setting: Setting, value: string): number | boolean {
  switch (setting) {
    case 'probability':
      if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(value)) {
        throw new FaultMixError(`${name} must be a probability from 0 to 1 (got "${value}")`);
      }
      return Number(value);
    case 'boolean':
      if (value !== 'true' && value !== 'false') {
        throw new FaultMixError(`${name} must be true or false (got "${value}")`);
      }
      return value === 'true';
    case 'milliseconds':
      if (!/^\d+$/.test(value) || Number(value) > MAX_WEBHOOK_DELAY_MS) {
        throw new FaultMixError(
          `${name} must be an integer from 0 to ${MAX_WEBHOOK_DELAY_MS} (got "${value}")`,
        );
      }
      return Number(value);
  }
}

/** The mix in the variable's own format (only the settings that differ from none). */
export function formatFaultMix(mix: FaultMix): string {
  return (Object.entries(SETTINGS) as Array<[SettingName, readonly [keyof FaultMix, Setting]]>)
    .filter(([, [field]]) => mix[field] !== NO_FAULTS[field])
    .map(([name, [field]]) => `${name}=${String(mix[field])}`)
    .join(',');
}
