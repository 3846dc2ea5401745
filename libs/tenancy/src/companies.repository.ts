import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type TypeOrmTransactionalAdapter,
} from '@ledgerkey/database';
import type { Company } from './company';

interface CompanyRow {
  id: string;
  name: string;
  country_code: string;
  currency: string;
}

function toCompany(row: CompanyRow): Company {
  return { id: row.id, name: row.name, countryCode: row.country_code, currency: row.currency };
}

@Injectable()
export class CompaniesRepository {
  constructor(private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>) {}

  @Transactional(Propagation.Mandatory)
  async insert(company: Omit<Company, 'id'>): Promise<Company> {
    const id = randomUUID();
    await this.txHost.tx.query(
      `INSERT INTO companies (id, name, country_code, currency) VALUES ($1, $2, $3, $4)`,
      [id, company.name, company.countryCode, company.currency],
    );
    return { id, ...company };
  }

  @Transactional(Propagation.Mandatory)
  async insertApiKey(companyId: string, keyHash: Buffer, keyPrefix: string): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO api_keys (id, company_id, key_hash, key_prefix) VALUES ($1, $2, $3, $4)`,
      [randomUUID(), companyId, keyHash, keyPrefix],
    );
  }

  /** The company owning an active (not revoked) key with this hash. */
  async findByApiKeyHash(keyHash: Buffer): Promise<Company | null> {
    const rows = await this.txHost.tx.query<CompanyRow[]>(
      `SELECT c.id, c.name, c.country_code, c.currency
         FROM api_keys k JOIN companies c ON c.id = k.company_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [keyHash],
    );
    return rows[0] ? toCompany(rows[0]) : null;
  }

  async exists(): Promise<boolean> {
    const rows = await this.txHost.tx.query<unknown[]>(`SELECT 1 FROM companies LIMIT 1`);
    return rows.length > 0;
  }
}
