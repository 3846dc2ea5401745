/**
 * Document money totals per EN 16931: line nets rounded per line, VAT rounded per rate on the
 * sum of that rate's line nets. Money is integer minor units; all arithmetic is exact (bigint).
 */
import {
  type DecimalValue,
  compareDecimal,
  formatDecimal,
  multiplyToMinorUnits,
  parseDecimal,
  percentOf,
} from './decimal';

export const MAX_QUANTITY_SCALE = 4;
export const MAX_VAT_RATE_SCALE = 2;
export const MAX_UNIT_PRICE = 1_000_000_000_000;

/** A validated invoice line: quantity and vatRate are decimal strings, unitPrice minor units. */
export interface PricedLine {
  quantity: string;
  unitPrice: number;
  vatRate: string;
}

export interface VatBreakdownRow {
  vatRate: string;
  netAmount: number;
  vatAmount: number;
}

export interface DocumentTotals {
  lineNetAmounts: number[];
  vatBreakdown: VatBreakdownRow[];
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
}

/** A computed amount does not fit a safe JS integer of minor units. */
export class AmountOutOfRangeError extends Error {
  readonly code = 'amount_out_of_range';

  constructor(message: string) {
    super(message);
    this.name = 'AmountOutOfRangeError';
  }
}

const MAX_SAFE_AMOUNT = BigInt(Number.MAX_SAFE_INTEGER);
const HUNDRED: DecimalValue = { units: 100n, scale: 0 };
const ZERO: DecimalValue = { units: 0n, scale: 0 };

function toSafeNumber(amount: bigint, what: string): number {
  if (amount > MAX_SAFE_AMOUNT || amount < -MAX_SAFE_AMOUNT) {
    throw new AmountOutOfRangeError(`${what} ${amount} exceeds Number.MAX_SAFE_INTEGER`);
  }
  return Number(amount);
}

function parseLine(line: PricedLine, index: number): { quantity: DecimalValue; rate: DecimalValue } {
  const quantity = parseDecimal(line.quantity, MAX_QUANTITY_SCALE);
  if (quantity === null || compareDecimal(quantity, ZERO) <= 0) {
    throw new Error(`lines[${index}].quantity is not a valid quantity: ${String(line.quantity)}`);
  }
  const rate = parseDecimal(line.vatRate, MAX_VAT_RATE_SCALE);
  if (rate === null || compareDecimal(rate, HUNDRED) > 0) {
    throw new Error(`lines[${index}].vatRate is not a valid VAT rate: ${String(line.vatRate)}`);
  }
  const price = line.unitPrice;
  if (!Number.isSafeInteger(price) || price < 0 || price > MAX_UNIT_PRICE) {
    throw new Error(`lines[${index}].unitPrice is not a valid unit price: ${String(price)}`);
  }
  return { quantity, rate };
}

/**
 * Computes line nets, the per-rate VAT breakdown and document totals.
 * Line net = quantity × unitPrice, rounded half away from zero. VAT per distinct rate (rates
 * compared numerically, "21" = "21.00") = rate × sum of that rate's line nets, rounded half away
 * from zero. vatTotal = Σ breakdown VAT; grossTotal = netTotal + vatTotal.
 * @returns lineNetAmounts in input order; vatBreakdown with canonical rate strings, sorted by
 *   rate descending.
 * @throws AmountOutOfRangeError if a line net, a breakdown amount or a total exceeds
 *   Number.MAX_SAFE_INTEGER.
 * @throws Error if a line violates the input contract (quantity not a decimal > 0 with at most
 *   4 decimals, vatRate not 0–100 with at most 2 decimals, unitPrice not an integer in
 *   [0, MAX_UNIT_PRICE]); this is a programming mistake, inputs must be validated first.
 */
export function computeDocumentTotals(lines: readonly PricedLine[]): DocumentTotals {
  const groups = new Map<string, { rate: DecimalValue; net: bigint }>();
  const lineNetAmounts: number[] = [];
  let netTotal = 0n;

  lines.forEach((line, index) => {
    const { quantity, rate } = parseLine(line, index);
    const net = multiplyToMinorUnits(quantity, BigInt(line.unitPrice));
    lineNetAmounts.push(toSafeNumber(net, `lines[${index}] net amount`));
    netTotal += net;
    const key = formatDecimal(rate);
    const group = groups.get(key);
    if (group === undefined) {
      groups.set(key, { rate, net });
    } else {
      group.net += net;
    }
  });

  const sorted = [...groups.entries()].sort(([, a], [, b]) => compareDecimal(b.rate, a.rate));
  let vatTotal = 0n;
  const vatBreakdown = sorted.map(([vatRate, { rate, net }]): VatBreakdownRow => {
    const vat = percentOf(net, rate);
    vatTotal += vat;
    return {
      vatRate,
      netAmount: toSafeNumber(net, `net amount at rate ${vatRate}`),
      vatAmount: toSafeNumber(vat, `VAT amount at rate ${vatRate}`),
    };
  });

  return {
    lineNetAmounts,
    vatBreakdown,
    netTotal: toSafeNumber(netTotal, 'netTotal'),
    vatTotal: toSafeNumber(vatTotal, 'vatTotal'),
    grossTotal: toSafeNumber(netTotal + vatTotal, 'grossTotal'),
  };
}
