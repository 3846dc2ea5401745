import { ValidationPipe, type ValidationError } from '@nestjs/common';

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
 * Strict schema validation for every body and query: unknown fields are rejected, types are
 * not coerced (a quoted number is not a number), nested objects are validated.
 */
export const requestValidationPipe = new ValidationPipe({
  transform: true,
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  transformOptions: { enableImplicitConversion: false },
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => new RequestValidationError(flatten(errors)),
});
