import { type ArgumentsHost, Catch, type ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PROBLEM_CONTENT_TYPE, renderProblem } from './problem-details';
import { requestIdOf } from './request-id';

/**
 * The one place errors become HTTP: every error is rendered as problem+json. 5xx are logged
 * once, with the cause. (Recorded idempotent answers are written by the idempotency layer.)
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    if (response.headersSent) return;

    const requestId = requestIdOf(request);
    if (!response.hasHeader('X-Request-Id')) response.setHeader('X-Request-Id', requestId);
    const problem = renderProblem(error, requestId);
    if (problem.status >= 500) {
      // The error itself, not its stack string: the JSON logger writes its cause chain too.
      this.logger.error({ err: error, requestId }, `${request.method} ${request.originalUrl} failed`);
    }
    response
      .status(problem.status)
      .set(problem.headers)
      .type(PROBLEM_CONTENT_TYPE)
      .send(JSON.stringify(problem.body));
  }
}
