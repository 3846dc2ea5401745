/** The tables and verdicts of `npm run bench:ab` (test/bench/ab.ts). */

/** One process's turn of one load: its rate, and its own CPU per request. */
export interface Turn {
  requestsPerSecond: number;
  cpuMsPerRequest: number;
}

/** What the report names: the loads and processes in the order of `turns[load][process][round]`. */
export interface AbRun {
  loads: Array<{ name: string; label: string }>;
  /** The baseline first, its control second, then the variants. */
  processes: Array<{ name: string; root: string }>;
  turns: Turn[][][];
}

const mean = (values: number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Sample standard deviation (n − 1); 0 for fewer than two values. */
function deviation(values: number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  return Math.sqrt(values.reduce((sum, v) => sum + (v - m) ** 2, 0) / (values.length - 1));
}

/** A process's ratios to the baseline's turn of the same round (the turns minutes apart at most). */
function ratios(turns: Turn[], baseline: Turn[], of: keyof Turn): number[] {
  return turns.map((turn, round) => turn[of] / baseline[round][of]);
}

/**
 * The A/A spread of a load: how far the control, the baseline's own copy, strays from 1 —
 *   spread = |1 − mean(control's rate ratios)| + SD(control's rate ratios per round, n − 1)
 * the control's bias plus its round-to-round scatter. A variant is "better" when its mean rate
 * ratio is above 1 + spread, "worse" below 1 − spread, else "within spread".
 */
export const SPREAD_FORMULA =
  "spread = |1 − control's mean rate ratio| + standard deviation (n − 1) of the control's per-round rate ratios; " +
  'better: mean rate ratio > 1 + spread, worse: < 1 − spread';

function spreadOf(control: number[]): { spread: number; bias: number; sd: number } {
  const bias = Math.abs(1 - mean(control));
  const sd = deviation(control);
  return { spread: bias + sd, bias, sd };
}

export function verdictOf(ratio: number, spread: number): 'better' | 'worse' | 'within spread' {
  if (ratio > 1 + spread) return 'better';
  if (ratio < 1 - spread) return 'worse';
  return 'within spread';
}

const pair = (values: number[]): string => `${mean(values).toFixed(3)}, ${median(values).toFixed(3)}`;

export function printReport({ loads, processes, turns }: AbRun): void {
  console.log(`\nprocesses: ${processes.map(({ name, root }) => `${name} (${root})`).join('; ')}`);
  for (const [l, load] of loads.entries()) {
    const [baseline] = turns[l];
    console.log(`\n### ${load.name}: ${load.label}\n`);
    console.log(
      '| process | requests/s (mean) | API CPU ms per request (mean) | rate ÷ baseline (mean, median) | CPU ÷ baseline (mean, median) |',
    );
    console.log('|---|---:|---:|---:|---:|');
    for (const [p, { name }] of processes.entries()) {
      const own = turns[l][p];
      const rate = mean(own.map((t) => t.requestsPerSecond)).toFixed(0);
      const cpu = mean(own.map((t) => t.cpuMsPerRequest)).toFixed(3);
      const versus =
        p === 0
          ? '— | —'
          : `${pair(ratios(own, baseline, 'requestsPerSecond'))} | ${pair(ratios(own, baseline, 'cpuMsPerRequest'))}`;
      console.log(`| ${name} | ${rate} | ${cpu} | ${versus} |`);
    }
  }
  console.log(`\nThe control ran the same build and start as the baseline. ${SPREAD_FORMULA}.`);
  for (const [l, load] of loads.entries()) {
    const [baseline, control, ...variants] = turns[l];
    const { spread, bias, sd } = spreadOf(ratios(control, baseline, 'requestsPerSecond'));
    console.log(
      `spread: ${load.name}: ±${spread.toFixed(3)} (|1 − control's mean| ${bias.toFixed(3)} + SD ${sd.toFixed(3)})`,
    );
    for (const [v, variant] of variants.entries()) {
      const ratio = mean(ratios(variant, baseline, 'requestsPerSecond'));
      console.log(
        `verdict: ${processes[v + 2].name} ${load.name}: rate ratio ${ratio.toFixed(3)} (control spread ±${spread.toFixed(3)}) → ${verdictOf(ratio, spread)}`,
      );
    }
  }
}
