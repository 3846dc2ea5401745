import {
  OPERATOR_TENANT_ID,
  type IdempotentAnswer,
  type IdempotentExecutor,
  type IdempotentRouteOptions,
} from '@ledgerkey/idempotency';
import { CreateCompanyDto, type CreateCompanyHandler, type CreatedCompanyView } from '@ledgerkey/tenancy';

/**
 * Company creation as an idempotent operation, shared by `POST /admin/companies` and the
 * operator CLI: one key scope (operators, `OPERATOR_TENANT_ID`), one stored answer. The answer
 * holds the new API key, so its stored body goes through the response sealer.
 */
export const CREATE_COMPANY_OPERATION: IdempotentRouteOptions<CreatedCompanyView> = {
  operation: 'admin.companies.create',
  body: CreateCompanyDto,
  status: 201,
  scope: 'operator',
  sensitiveResponse: true,
};

/**
 * Creates a company under an operator's idempotency key, without HTTP (the CLI): the same call
 * the route makes, so a key used on either replays on both.
 * @throws IdempotencyKeyReusedError, IdempotencyKeyInUseError (see `IdempotentExecutor`)
 */
export function createCompanyOnce(
  executor: IdempotentExecutor,
  handler: CreateCompanyHandler,
  key: string,
  dto: CreateCompanyDto,
): Promise<IdempotentAnswer> {
  return executor.execute({
    operation: CREATE_COMPANY_OPERATION,
    tenantId: OPERATOR_TENANT_ID,
    key,
    payload: dto,
    execute: () => handler.execute(dto),
  });
}
