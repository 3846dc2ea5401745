import { BadRequestException, NotFoundException } from '@nestjs/common';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '@ledgerkey/idempotency';
import { OrderAlreadyInvoicedError } from '@ledgerkey/invoicing';
import { QueryFailedError } from 'typeorm';
import { renderProblem } from './problem-details';

describe('renderProblem', () => {
  it('renders a domain error with its status, code and documented fields', () => {
    const problem = renderProblem(new OrderAlreadyInvoicedError('order-1', 'inv-1'), 'req_1');
    expect(problem.status).toBe(409);
    expect(problem.body).toEqual({
      type: 'https://docs.ledgerkey.dev/errors/order_already_invoiced',
      title: 'Order already invoiced',
      status: 409,
      detail: 'Order order-1 is already invoiced by invoice inv-1.',
      code: 'order_already_invoiced',
      requestId: 'req_1',
      existingInvoiceId: 'inv-1',
    });
  });

  it('adds Retry-After for a key still in use', () => {
    const problem = renderProblem(new IdempotencyKeyInUseError(), 'req_2');
    expect(problem.status).toBe(409);
    expect(problem.headers).toEqual({ 'Retry-After': '1' });
  });

  it('uses the contract wording for a reused key', () => {
    const problem = renderProblem(new IdempotencyKeyReusedError(), 'req_3');
    expect(problem.status).toBe(422);
    expect(problem.body.detail).toBe('Idempotency-Key was already used with a different request payload.');
  });

  it('maps Nest route misses to not_found in our words', () => {
    const problem = renderProblem(new NotFoundException('Cannot GET /nope'), 'req_4');
    expect(problem.status).toBe(404);
    expect(problem.body.code).toBe('not_found');
    expect(problem.body.detail).toBe('No such route or resource.');
  });

  it('gives a framework 400 that names no field an errors[] all the same', () => {
    const problem = renderProblem(new BadRequestException('Failed to decode param'), 'req_8');
    expect(problem.status).toBe(400);
    expect(problem.body).toMatchObject({
      code: 'validation_failed',
      detail: 'The request is malformed.',
      errors: [{ field: 'request', message: 'is malformed' }],
    });
  });

  it('hides everything about unexpected errors', () => {
    const error = new Error('duplicate key value violates unique constraint "pk_x" (INSERT INTO secret)');
    const problem = renderProblem(error, 'req_5');
    expect(problem.status).toBe(500);
    expect(problem.body.code).toBe('internal_error');
    expect(JSON.stringify(problem.body)).not.toMatch(/INSERT|secret|constraint/);
  });

  it('treats an unknown code as unexpected', () => {
    const error = Object.assign(new Error('boom'), { code: 'ERR_SOMETHING_ELSE' });
    expect(renderProblem(error, 'req_6').status).toBe(500);
  });

  it('answers 503 with Retry-After, in its own words, when the database connection is lost', () => {
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const problem = renderProblem(error, 'req_7');
    expect(problem.status).toBe(503);
    expect(problem.headers).toEqual({ 'Retry-After': '1' });
    expect(problem.body).toMatchObject({
      code: 'service_unavailable',
      detail: 'The database is not reachable; retry shortly.',
    });
    expect(JSON.stringify(problem.body)).not.toMatch(/ECONNREFUSED|5432/);
  });

  it.each([
    ['a lock wait past statement_timeout', '57014'],
    ['a lock timeout', '55P03'],
    ['a serialization failure', '40001'],
    ['a deadlock', '40P01'],
  ])('answers 503 with Retry-After for %s, naming no internals', (_name, code) => {
    const driverError = Object.assign(new Error('canceling statement (UPDATE document_sequences)'), { code });
    const problem = renderProblem(
      new QueryFailedError('UPDATE document_sequences', [], driverError),
      'req_8',
    );
    expect(problem.status).toBe(503);
    expect(problem.headers).toEqual({ 'Retry-After': '1' });
    expect(problem.body).toMatchObject({
      code: 'service_unavailable',
      detail: 'The database could not complete the request in time; retry shortly.',
    });
    expect(JSON.stringify(problem.body)).not.toMatch(/document_sequences|canceling/);
  });
});
