import type { INestApplicationContext } from '@nestjs/common';
import { type IdempotentAnswer, IdempotentExecutor, type IdempotentOperation } from '@ledgerkey/idempotency';
import {
  ApiKeyQueries,
  type ApiKeyView,
  CompaniesRepository,
  CreateApiKeyDto,
  CreateApiKeyHandler,
  type CreatedApiKeyView,
  RevokeApiKeyHandler,
  RotateApiKeyHandler,
  type RotatedApiKey,
} from '@ledgerkey/tenancy';
import { ClsService } from 'nestjs-cls';
import { requestValidationPipe } from '../request-validation';
import { CREATE_API_KEY_OPERATION } from './create-api-key.operation';

/**
 * A rotation as an idempotent operation of the company (CLI only): a retry with the same key
 * after a lost output prints the same new key instead of rotating again. Its answer holds the
 * new key, so it is stored sealed.
 */
const ROTATE_API_KEY_OPERATION: IdempotentOperation<RotatedApiKey> = {
  operation: 'api-keys.rotate',
  status: 200,
  sensitiveResponse: true,
};

/** A refusal the operator can act on; its message is all they need. */
export class ApiKeyCommandError extends Error {}

/**
 * The operator CLI's key commands: the same use cases, operations and key scopes as the API
 * (`api-key:create` shares its Idempotency-Keys with `POST /v1/api-keys/create` of the company).
 * Each returns what to print: its JSON (`--json`) or lines for people.
 */
export class ApiKeyCommands {
  constructor(private readonly app: INestApplicationContext) {}

  async listCompanies(json: boolean): Promise<string> {
    const companies = await this.inContext(() => this.app.get(CompaniesRepository).list());
    if (json) return JSON.stringify({ object: 'list', data: companies });
    return companies
      .map((c) => `${c.id}  ${c.countryCode} ${c.currency}  ${c.activeApiKeys} active key(s)  ${c.name}`)
      .join('\n');
  }

  async listKeys(companyId: string, json: boolean): Promise<string> {
    await this.requireCompany(companyId);
    const keys: ApiKeyView[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await this.inContext(() =>
        this.app.get(ApiKeyQueries).list(companyId, { limit: 100, startingAfter }),
      );
      keys.push(...page.data);
      if (!page.hasMore) break;
      startingAfter = page.data[page.data.length - 1].id;
    }
    if (json) return JSON.stringify({ object: 'list', data: keys });
    return keys.map(describe).join('\n');
  }

  /** @throws IdempotencyError (key reused with another input, or in use) */
  async create(
    companyId: string,
    input: { scope?: string; name?: string },
    idempotencyKey: string,
    json: boolean,
  ): Promise<string> {
    const dto = (await requestValidationPipe.transform(input, {
      type: 'body',
      metatype: CreateApiKeyDto,
    })) as CreateApiKeyDto;
    await this.requireCompany(companyId);
    const answer = await this.once(companyId, idempotencyKey, CREATE_API_KEY_OPERATION, dto, () =>
      this.app.get(CreateApiKeyHandler).execute(companyId, dto),
    );
    if (json) return answer.body;
    const key = JSON.parse(answer.body) as CreatedApiKeyView;
    return `${describe(key)}\napi key ${key.secret}\n${keptFor(answer, idempotencyKey)}`;
  }

  /** @throws IdempotencyError (key reused with another input, or in use) */
  async rotate(companyId: string, apiKeyId: string, idempotencyKey: string, json: boolean): Promise<string> {
    await this.requireCompany(companyId);
    const answer = await this.once(companyId, idempotencyKey, ROTATE_API_KEY_OPERATION, { apiKeyId }, () =>
      this.app.get(RotateApiKeyHandler).execute(companyId, apiKeyId),
    );
    if (json) return answer.body;
    const { created, revoked } = JSON.parse(answer.body) as RotatedApiKey;
    return (
      `revoked ${describe(revoked)}\ncreated ${describe(created)}\napi key ${created.secret}\n` +
      keptFor(answer, idempotencyKey)
    );
  }

  async revoke(companyId: string, apiKeyId: string, json: boolean): Promise<string> {
    await this.requireCompany(companyId);
    const key = await this.inContext(() => this.app.get(RevokeApiKeyHandler).execute(companyId, apiKeyId));
    return json ? JSON.stringify(key) : `revoked ${describe(key)}`;
  }

  private async once<T>(
    companyId: string,
    key: string,
    operation: IdempotentOperation<T>,
    payload: object,
    execute: () => Promise<T>,
  ): Promise<IdempotentAnswer> {
    const answer = await this.inContext(() =>
      this.app.get(IdempotentExecutor).execute({ operation, tenantId: companyId, key, payload, execute }),
    );
    if (answer.status >= 300) throw new ApiKeyCommandError(`refused: ${answer.body}`);
    return answer;
  }

  private async requireCompany(companyId: string): Promise<void> {
    const company = /^[0-9a-f-]{36}$/i.test(companyId)
      ? await this.inContext(() => this.app.get(CompaniesRepository).findById(companyId))
      : null;
    if (!company) throw new ApiKeyCommandError(`no company ${companyId} (see company:list)`);
  }

  private inContext<T>(run: () => Promise<T>): Promise<T> {
    return this.app.get(ClsService).run(run);
  }
}

function describe(key: ApiKeyView): string {
  const state = key.revokedAt === null ? 'active' : `revoked ${key.revokedAt}`;
  return `${key.id}  ${key.prefix}…  ${key.scope}  ${state}  ${key.name ?? ''}`.trimEnd();
}

function keptFor(answer: IdempotentAnswer, idempotencyKey: string): string {
  return answer.outcome === 'replayed'
    ? `(made earlier with idempotency key ${idempotencyKey}; nothing new was made)`
    : `(keep it now: it is shown again only to a retry with this idempotency key, until ${answer.headers['Idempotency-Key-Expires']})`;
}
