import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CreateCompanyDto, CreateCompanyHandler } from '@ledgerkey/tenancy';
import { ClsService } from 'nestjs-cls';
import { AppModule } from './app.module';
import { ConfigError, loadConfig } from './config';
import { prepareDatabase } from './database-bootstrap';
import { requestValidationPipe } from './request-validation';

const USAGE = `usage:
  npm run cli -- migrate
  npm run cli -- company:create --name NAME --country CC --currency CUR [--json]`;

/** Operator commands. Same configuration, database and use cases as the API. */
async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const logger = new Logger('cli');
  logger.localInstance.setLogLevels?.(['error', 'warn']);
  const config = loadConfig(process.env);
  switch (command) {
    case 'migrate': {
      const database = await prepareDatabase(config, logger);
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
          json: { type: 'boolean', default: false },
        },
        strict: true,
      });
      const dto = (await requestValidationPipe.transform(
        { name: values.name, countryCode: values.country, currency: values.currency },
        { type: 'body', metatype: CreateCompanyDto },
      )) as CreateCompanyDto;
      const database = await prepareDatabase(config, logger);
      const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, database), {
        logger: ['error', 'warn'],
      });
      try {
        const created = await app.get(ClsService).run(() => app.get(CreateCompanyHandler).execute(dto));
        process.stdout.write(
          values.json
            ? `${JSON.stringify(created)}\n`
            : `company ${created.companyId}\napi key ${created.apiKey}  (shown once)\n`,
        );
      } finally {
        await app.close();
      }
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
    } else if (error instanceof Error && 'errors' in error) {
      process.stderr.write(`${error.message}\n${JSON.stringify((error as { errors: unknown }).errors)}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exit(1);
  },
);
