import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { describeMinorUnits, MinorUnits, noteJsonNumberSource } from './minor-units.validator';

class Line {
  @MinorUnits({ min: 0, max: 1_000_000_000_000 })
  unitPrice: number;
}

/** JSON.parse as the API's body parser runs it: the reviver sees each number's source text. */
function parse(json: string): unknown {
  return JSON.parse(json, function (this: unknown, key, value, context?: { source?: string }) {
    noteJsonNumberSource(this, key, value, context?.source);
    return value as unknown;
  });
}

function messagesFor(json: string): string[] {
  const errors = validateSync(plainToInstance(Line, parse(json)));
  return errors.flatMap((error) => Object.values(error.constraints ?? {}));
}

describe('@MinorUnits', () => {
  it('accepts an integer literal in range', () => {
    expect(messagesFor('{ "unitPrice": 5000 }')).toEqual([]);
    expect(messagesFor('{ "unitPrice": 0 }')).toEqual([]);
  });

  it.each(['5e3', '5.0e3', '5000E0', '50000e-1'])(
    'takes %s as 5000: exponent notation is a spelling of the integer (number formatting is not the request)',
    (literal) => {
      expect(messagesFor(`{ "unitPrice": ${literal} }`)).toEqual([]);
      expect(plainToInstance(Line, parse(`{ "unitPrice": ${literal} }`)).unitPrice).toBe(5000);
    },
  );

  it.each(['50.00', '5000.0', '-1.0', '50.5'])(
    'refuses %s, saying minor units (JSON.parse alone would read 50.00 as 50 cents)',
    (literal) => {
      const messages = messagesFor(`{ "unitPrice": ${literal} }`);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain('unitPrice must be an integer number of minor units');
      expect(messages[0]).toContain('5000 is 50.00 EUR');
    },
  );

  it('names the decimal that was sent', () => {
    expect(messagesFor('{ "unitPrice": 50.00 }')[0]).toMatch(/without a decimal point; got 50\.00$/);
  });

  it.each([['"5000"'], ['-1'], ['1000000000001'], ['null'], ['true']])(
    'refuses %s with the range',
    (literal) => {
      expect(messagesFor(`{ "unitPrice": ${literal} }`)).toEqual([
        'unitPrice must be an integer number of minor units (cents: 5000 is 50.00 EUR), from 0 to 1000000000000',
      ]);
    },
  );

  it('remembers notation per object: the same key in another object is unaffected', () => {
    const lines = parse('[{ "unitPrice": 50.00 }, { "unitPrice": 50 }]') as object[];
    const [decimal, integer] = lines.map((line) => validateSync(plainToInstance(Line, line)).length);
    expect({ decimal, integer }).toEqual({ decimal: 1, integer: 0 });
  });
});

describe('describeMinorUnits', () => {
  it('reads the example out in major units', () => {
    expect(describeMinorUnits(5000)).toBe(
      'An integer number of the currency minor unit (cents for EUR): 5000 = 50.00 EUR.',
    );
    expect(describeMinorUnits(12105, 'Total')).toBe(
      'Total. An integer number of the currency minor unit (cents for EUR): 12105 = 121.05 EUR.',
    );
    expect(describeMinorUnits(0)).toContain('0 = 0.00 EUR');
  });
});
