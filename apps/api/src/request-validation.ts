import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';

export interface FieldError {
  field: string;
  message: string;
}

/** 400 validation_failed: the request does not match the schema. Never stored under a key. */
export class RequestValidationError extends Error {
  readonly code = 'validation_failed';
  constructor(readonly errors: FieldError[]) {
    super(
      errors.length === 1
        ? `${errors[0].field}: ${errors[0].message}`
        : `The request has ${errors.length} invalid fields.`,
    );
  }
}

function flatten(errors: ValidationError[], path = ''): FieldError[] {
  return errors.flatMap((error) => {
    const isIndex = /^\d+$/.test(error.property);
    const field =
      path === '' ? error.property : isIndex ? `${path}[${error.property}]` : `${path}.${error.property}`;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      // class-validator messages start with the property name; name the full path instead.
      message: message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Names a body's properties may not have, at any depth, `metadata` keys included: the validation
 * pipe deletes `__proto__`, `constructor` and `prototype` from what it validates, and
 * class-transformer leaves out every member of `Object.prototype` (`toString` and the like), so
 * such a property would be dropped silently instead of refused.
 */
const BUILT_IN_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__', 'prototype']);

/** The properties of a body, at any depth, named like built-in object members. */
function builtInNamedFields(value: unknown, path = ''): FieldError[] {
  if (Array.isArray(value))
    return value.flatMap((item, index) => builtInNamedFields(item, `${path}[${index}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.keys(value).flatMap((key) => {
    const field = path === '' ? key : `${path}.${key}`;
    return BUILT_IN_NAMES.has(key)
      ? [{ field, message: BUILT_IN_NAME_MESSAGE }]
      : builtInNamedFields((value as Record<string, unknown>)[key], field);
  });
}

const BUILT_IN_NAME_MESSAGE =
  'must not be named like a built-in object member (__proto__, constructor, prototype, toString, …)';

/**
 * The application's ValidationPipe, which also refuses a body that is not a JSON object as a
 * whole, and properties named like built-in object members.
 */
class RequestValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      // Else an array would be validated as an object with properties "0", "1", …
      throw new RequestValidationError([{ field: 'body', message: 'must be a JSON object' }]);
    }
    if (metadata.type === 'body') {
      const builtIn = builtInNamedFields(value);
      if (builtIn.length > 0) throw new RequestValidationError(builtIn);
    }
    return super.transform(value, metadata) as Promise<unknown>;
  }
}

/**
 * Strict schema validation for every body and query: unknown fields are rejected, types are
 * not coerced (a quoted number is not a number), nested objects are validated.
 */
export const requestValidationPipe = new RequestValidationPipe({
  transform: true,
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  transformOptions: { enableImplicitConversion: false },
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => new RequestValidationError(flatten(errors)),
});
