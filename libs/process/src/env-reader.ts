/** The process environment, or a test's stand-in for it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Typed options read from the environment, and one line per bad variable (empty when all are fine). */
export interface ParsedConfig<Options> {
  options: Options;
  problems: string[];
}

/**
 * The one way variables are read: empty means unset (the default applies), a bad value is
 * recorded as a problem naming the variable and the default is used meanwhile, so a parser
 * reports every bad variable at once. Each lib parses its own variables with it; each app
 * composes the parsers it needs and stops at boot on any problem (`throwOnProblems`).
 */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  /** The value, or undefined when the variable is unset or empty. */
  optional(name: string): string | undefined {
    const raw = this.env[name];
    return raw === undefined || raw === '' ? undefined : raw;
  }

  /** A decimal integer from `min` to `max`; `fallback` when unset. */
  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      return this.refuse(`${name} must be an integer from ${min} to ${max} (got "${raw}")`, fallback);
    }
    return value;
  }

  /** `true`/`1` or `false`/`0`; `fallback` when unset. */
  boolean(name: string, fallback: boolean): boolean {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    return this.refuse(`${name} must be true or false (got "${raw}")`, fallback);
  }

  /** One of `values`; `fallback` when unset. */
  oneOf<Value extends string>(name: string, values: readonly Value[], fallback: Value): Value {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as Value;
    return this.refuse(`${name} must be one of ${values.join(', ')}`, fallback);
  }

  /**
   * Whether a test or benchmark switch may be read. Such a switch turns a guarantee off, so
   * when set at all (even to its "off" value) it is refused, as a problem naming it and
   * `effect`, unless NODE_ENV=test: nothing of the kind can reach a deployment.
   * @returns true when set and NODE_ENV=test (read its value then); false when unset or refused
   */
  testSwitch(name: string, effect: string): boolean {
    if (this.optional(name) === undefined) return false;
    if (this.optional('NODE_ENV') === 'test') return true;
    this.problems.push(`${name} ${effect}: for tests and benchmarks only, refused unless NODE_ENV=test`);
    return false;
  }

  /** Records a problem a parser found itself (a rule across variables, a format of its own). */
  problem(message: string): void {
    this.problems.push(message);
  }

  /** The parser's result: its options and every problem recorded so far. */
  parsed<Options>(options: Options): ParsedConfig<Options> {
    return { options, problems: [...this.problems] };
  }

  private refuse<Value>(message: string, fallback: Value): Value {
    this.problems.push(message);
    return fallback;
  }
}

/** The configuration cannot run: every problem, one line each, naming the variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/** @throws ConfigError listing the problems of all parts, when there is any */
export function throwOnProblems(...parts: ReadonlyArray<{ problems: readonly string[] }>): void {
  const problems = parts.flatMap((part) => part.problems);
  if (problems.length > 0) throw new ConfigError(problems);
}
