import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { prepareDatabase } from '@ledgerkey/database';
import { IdempotencyError, IdempotentExecutor, parseIdempotencyKey } from '@ledgerkey/idempotency';
import { ConfigError, JsonLogger } from '@ledgerkey/process';
import {
  ApiKeyNotFoundError,
  CreateCompanyDto,
  CreateCompanyHandler,
  type CreatedCompanyView,
  LastReadWriteKeyError,
} from '@ledgerkey/tenancy';
import { ClsService } from 'nestjs-cls';
import { createCompanyOnce } from './admin/create-company.operation';
import { ApiKeyCommandError, ApiKeyCommands } from './api-keys/api-key-commands';
import { AppModule } from './app.module';
import { loadConfig } from './config';
import { DATABASE_SCHEMA } from './database-schema';
import { requestValidationPipe } from './request-validation';

const USAGE = `usage:
  npm run cli -- migrate
  npm run cli -- company:create --name NAME --country CC --currency CUR --idempotency-key KEY [--json]
      [--legal-name NAME] [--vat-id ID] [--registration-number NO] [--street S] [--city C]
      [--postal-code P] [--address-country CC] [--iban IBAN] [--email E] [--peppol-id SCHEME:ID]
  npm run cli -- company:list [--json]
  npm run cli -- api-key:list --company ID [--json]
  npm run cli -- api-key:create --company ID --scope read_write|read_only [--name NAME] --idempotency-key KEY [--json]
  npm run cli -- api-key:rotate --company ID --key ID --idempotency-key KEY [--json]
  npm run cli -- api-key:revoke --company ID --key ID [--json]

company:create is idempotent like POST /admin/companies (and shares its keys): run it again with
the same --idempotency-key and input after a failure or a lost output, and it prints the same
company and API key instead of creating a second one. The profile options set the seller details
its invoices carry (as the body's \`profile\` does on POST /admin/companies; the legal name defaults
to --name); POST /v1/company/profile/update changes them later. api-key:create is idempotent the same way
(sharing the company's keys of POST /v1/api-keys/create), and so is api-key:rotate, which creates
a key with the same name and scope and revokes the old one in one transaction. api-key:revoke
refuses the company's last active read_write key (rotate it instead). Revoked keys stop working
on every API process within 5 s.`;

/** company:create's profile options → the body's `profile` members. */
const PROFILE_OPTIONS = {
  'legal-name': 'legalName',
  'vat-id': 'vatId',
  'registration-number': 'registrationNumber',
  iban: 'iban',
  email: 'email',
  'peppol-id': 'peppolId',
} as const;
const ADDRESS_OPTIONS = {
  street: 'street',
  city: 'city',
  'postal-code': 'postalCode',
  'address-country': 'countryCode',
} as const;

/** The `profile` of a company:create body, or undefined when no profile option was given. */
function profileOf(values: Record<string, string | boolean | undefined>): object | undefined {
  const pick = (options: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(options).flatMap(([option, member]) =>
        values[option] === undefined ? [] : [[member, values[option]]],
      ),
    );
  const profile: Record<string, unknown> = pick(PROFILE_OPTIONS);
  const address = pick(ADDRESS_OPTIONS);
  if (Object.keys(address).length > 0) profile.address = address;
  if (Object.keys(profile).length === 0) return undefined;
  return { legalName: values.name, ...profile };
}

const KEY_COMMAND_OPTIONS = {
  company: { type: 'string' },
  key: { type: 'string' },
  scope: { type: 'string' },
  name: { type: 'string' },
  'idempotency-key': { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

/** Operator commands. Same configuration, database and use cases as the API. */
async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // Warnings and errors as JSON lines on stderr: stdout carries the command's output only.
  const jsonLogger = new JsonLogger('warn', process.stderr);
  Logger.overrideLogger(jsonLogger);
  const logger = new Logger('cli');
  const config = loadConfig(process.env);
  switch (command) {
    case 'migrate': {
      const database = await prepareDatabase(config.database, DATABASE_SCHEMA, logger);
      await database.embedded?.stop();
      process.stdout.write('migrations are up to date\n');
      return;
    }
    case 'company:create': {
      const { values } = parseArgs({
        args: rest,
        options: {
          name: { type: 'string' },
          country: { type: 'string' },
          currency: { type: 'string' },
          'idempotency-key': { type: 'string' },
          json: { type: 'boolean', default: false },
          ...Object.fromEntries(
            [...Object.keys(PROFILE_OPTIONS), ...Object.keys(ADDRESS_OPTIONS)].map((option) => [
              option,
              { type: 'string' as const },
            ]),
          ),
        },
        strict: true,
      });
      if (values['idempotency-key'] === undefined) {
        throw new CliError(`--idempotency-key is required (one key per company to create)\n${USAGE}`);
      }
      const key = parseIdempotencyKey(values['idempotency-key']);
      const profile = profileOf(values);
      const dto = (await requestValidationPipe.transform(
        {
          name: values.name,
          countryCode: values.country,
          currency: values.currency,
          // Absent, not undefined, without profile options: the same body (and key fingerprint) as before.
          ...(profile === undefined ? {} : { profile }),
        },
        { type: 'body', metatype: CreateCompanyDto },
      )) as CreateCompanyDto;
      const database = await prepareDatabase(config.database, DATABASE_SCHEMA, logger);
      const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, database), {
        logger: jsonLogger,
      });
      try {
        // The same protocol, operation and key scope as POST /admin/companies, without HTTP.
        const answer = await app
          .get(ClsService)
          .run(() => createCompanyOnce(app.get(IdempotentExecutor), app.get(CreateCompanyHandler), key, dto));
        if (answer.status >= 300) throw new CliError(`company:create was refused: ${answer.body}`);
        const created = JSON.parse(answer.body) as CreatedCompanyView;
        const replayed = answer.outcome === 'replayed';
        process.stdout.write(
          values.json
            ? `${answer.body}\n`
            : `company ${created.companyId}\napi key ${created.apiKey}\n` +
                (replayed
                  ? `(created earlier with idempotency key ${key}; nothing new was created)\n`
                  : `(keep it now: it is shown again only to a retry with this idempotency key, until ${answer.headers['Idempotency-Key-Expires']})\n`),
        );
      } finally {
        await app.close();
      }
      return;
    }
    case 'company:list':
    case 'api-key:list':
    case 'api-key:create':
    case 'api-key:rotate':
    case 'api-key:revoke': {
      const { values } = parseArgs({ args: rest, options: KEY_COMMAND_OPTIONS, strict: true });
      const required = (name: 'company' | 'key' | 'idempotency-key'): string => {
        const value = values[name];
        if (value === undefined) throw new CliError(`--${name} is required\n${USAGE}`);
        return value;
      };
      const keyOf = (): string => parseIdempotencyKey(required('idempotency-key'));
      const database = await prepareDatabase(config.database, DATABASE_SCHEMA, logger);
      const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, database), {
        logger: jsonLogger,
      });
      try {
        const commands = new ApiKeyCommands(app);
        const json = values.json;
        const output =
          command === 'company:list'
            ? await commands.listCompanies(json)
            : command === 'api-key:list'
              ? await commands.listKeys(required('company'), json)
              : command === 'api-key:create'
                ? await commands.create(
                    required('company'),
                    { scope: values.scope, name: values.name },
                    keyOf(),
                    json,
                  )
                : command === 'api-key:rotate'
                  ? await commands.rotate(required('company'), required('key'), keyOf(), json)
                  : await commands.revoke(required('company'), required('key'), json);
        process.stdout.write(`${output}\n`);
      } finally {
        await app.close();
      }
      return;
    }
    default:
      throw new CliError(USAGE);
  }
}

/** An error whose message is all the operator needs (no stack). */
class CliError extends Error {}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (
      error instanceof ConfigError ||
      error instanceof CliError ||
      error instanceof ApiKeyCommandError ||
      error instanceof IdempotencyError
    ) {
      process.stderr.write(`${error.message}\n`);
    } else if (error instanceof ApiKeyNotFoundError || error instanceof LastReadWriteKeyError) {
      process.stderr.write(`${error.code}: ${error.message}\n`);
    } else if (error instanceof Error && 'errors' in error) {
      process.stderr.write(`${error.message}\n${JSON.stringify((error as { errors: unknown }).errors)}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exit(1);
  },
);
