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

/** The application's ValidationPipe, which also refuses a body that is not a JSON object as a whole. */
class RequestValidationPipe extends ValidationPipe {
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      // Else an array would be validated as an object with properties "0", "1", …
      throw new RequestValidationError([{ field: 'body', message: 'must be a JSON object' }]);
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
