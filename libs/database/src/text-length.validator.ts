import { ApiProperty } from '@nestjs/swagger';
import { registerDecorator, type ValidationOptions } from 'class-validator';

/**
 * The length of a text as PostgreSQL's `length()` counts it in a UTF-8 database, and as JSON
 * Schema's `maxLength` does: Unicode code points. A surrogate pair is one, a combining mark or
 * a variation selector (U+FE0F) is one more. (class-validator's Length skips variation selectors,
 * and `String.length` counts UTF-16 units; neither matches the column CHECKs.)
 */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _codePoint of text) count++;
  return count;
}

/**
 * A string of `min`–`max` code points: the same bound as the column's
 * `CHECK (length(column) BETWEEN min AND max)`, so text that passes validation always fits.
 * Also documents `minLength`/`maxLength` in the OpenAPI schema (which count code points too);
 * the property's own `@ApiProperty` adds the rest.
 */
export function CodePointLength(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 0 || max < min) {
    throw new Error(`invalid length bounds ${min}–${max}`);
  }
  const bound = min === 0 ? `at most ${max}` : `${min}–${max}`;
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'codePointLength',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [min, max],
      options: {
        message: `$property must be a string of ${bound} characters (Unicode code points)`,
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string') return false;
          const length = codePointLength(value);
          return length >= min && length <= max;
        },
      },
    });
    // Merged with the property's other @ApiProperty metadata, in either decorator order.
    ApiProperty({ minLength: min === 0 ? undefined : min, maxLength: max })(target, propertyName as string);
  };
}
