import fc from 'fast-check';
import { lastDayOf, monthIndex, monthOfIndex } from './accounting-month';
import { depreciationIn, endMonth, monthlyDepreciation } from './straight-line';

describe('straight-line depreciation', () => {
  const asset = { cost: 100_000, residualValue: 10_000, usefulLifeMonths: 7, startMonth: '2026-11' };

  it('depreciates the same amount every month and the rounding remainder in the last', () => {
    expect(monthlyDepreciation(asset)).toBe(12_857);
    const months = ['2026-11', '2026-12', '2027-01', '2027-02', '2027-03', '2027-04', '2027-05'];
    expect(months.map((month) => depreciationIn(asset, month))).toEqual([
      ...[1, 2, 3, 4, 5, 6].map((monthNumber) => ({ monthNumber, amount: 12_857 })),
      { monthNumber: 7, amount: 90_000 - 6 * 12_857 },
    ]);
    expect(endMonth(asset)).toBe('2027-05');
  });

  it('depreciates nothing before the start month or after the last month', () => {
    expect(depreciationIn(asset, '2026-10')).toBeNull();
    expect(depreciationIn(asset, '2027-06')).toBeNull();
  });

  it('over its life, any asset depreciates exactly cost − residual value, never a negative month', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000_000_000 }),
        fc.integer({ min: 1, max: 1200 }),
        fc.integer({ min: 1990 * 12, max: 2090 * 12 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (cost, usefulLifeMonths, start, residualShare) => {
          const subject = {
            cost,
            residualValue: Math.floor(cost * residualShare),
            usefulLifeMonths,
            startMonth: monthOfIndex(start),
          };
          let total = 0;
          for (let index = start - 1; index <= start + usefulLifeMonths; index++) {
            const month = depreciationIn(subject, monthOfIndex(index));
            if (month === null) continue;
            expect(month.amount).toBeGreaterThanOrEqual(0);
            total += month.amount;
          }
          expect(total).toBe(subject.cost - subject.residualValue);
        },
      ),
      { seed: 20_261_101, numRuns: 100 },
    );
  });

  it('months: arithmetic and last days', () => {
    expect(monthOfIndex(monthIndex('2026-12') + 1)).toBe('2027-01');
    expect(lastDayOf('2028-02')).toBe('2028-02-29');
    expect(lastDayOf('2026-11')).toBe('2026-11-30');
  });
});
