export class UnauthorizedError extends Error {
  readonly code = 'unauthorized';
  constructor() {
    super('A valid API key is required: send "Authorization: Bearer <api key>".');
  }
}
