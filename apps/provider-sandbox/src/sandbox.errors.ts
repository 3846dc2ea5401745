/**
 * An answer other than success, with a stable `code`. The HTTP layer renders it as
 * `{ "error": { "type", "code", "message", "param" } }` with `status`.
 */
export class SandboxRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export const invalidParameter = (param: string, message: string): SandboxRequestError =>
  new SandboxRequestError(400, 'parameter_invalid', message, param);

export const notFound = (what: string, id: string): SandboxRequestError =>
  new SandboxRequestError(404, 'resource_missing', `No ${what} ${id}.`);
