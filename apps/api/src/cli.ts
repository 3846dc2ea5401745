import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { prepareDatabase } from '@ledgerkey/database';
import { IdempotencyError, IdempotentExecutor, parseIdempotencyKey } from '@ledgerkey/idempotency';
import { ConfigError, JsonLogger } from '@ledgerkey/process';
import { CreateCompanyDto, CreateCompanyHandler, type CreatedCompanyView } from '@ledgerkey/tenancy';
import { ClsService } from 'nestjs-cls';
import { createCompanyOnce } from './admin/create-company.operation';
import { AppModule } from './app.module';
import { loadConfig } from './config';
import { DATABASE_SCHEMA } from './database-schema';
import { requestValidationPipe } from './request-validation';

const USAGE = `usage:
  npm run cli -- migrate
  npm run cli -- company:create --name NAME --country CC --currency CUR --idempotency-key KEY [--json]

company:create is idempotent like POST /admin/companies (and shares its keys): run it again with
the same --idempotency-key and input after a failure or a lost output, and it prints the same
company and API key instead of creating a second one.`;

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
        },
        strict: true,
      });
      if (values['idempotency-key'] === undefined) {
        throw new CliError(`--idempotency-key is required (one key per company to create)\n${USAGE}`);
      }
      const key = parseIdempotencyKey(values['idempotency-key']);
      const dto = (await requestValidationPipe.transform(
        { name: values.name, countryCode: values.country, currency: values.currency },
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
    default:
      throw new CliError(USAGE);
  }
}

/** An error whose message is all the operator needs (no stack). */
class CliError extends Error {}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof CliError || error instanceof IdempotencyError) {
      process.stderr.write(`${error.message}\n`);
    } else if (error instanceof Error && 'errors' in error) {
      process.stderr.write(`${error.message}\n${JSON.stringify((error as { errors: unknown }).errors)}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exit(1);
  },
);
