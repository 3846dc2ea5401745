import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type TypeOrmTransactionalAdapter,
} from '@ledgerkey/database';
import type { Company } from './company';

export interface CompanyListItem extends Company {
  createdAt: string;
  activeApiKeys: number;
}

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

  async findById(companyId: string): Promise<Company | null> {
    const rows = await this.txHost.tx.query<CompanyRow[]>(
      `SELECT id, name, country_code, currency FROM companies WHERE id = $1`,
      [companyId],
    );
    return rows[0] ? toCompany(rows[0]) : null;
  }

  /** Every company, oldest first (operators' CLI). */
  async list(): Promise<CompanyListItem[]> {
    const rows = await this.txHost.tx.query<Array<CompanyRow & { created_at: Date; active_keys: number }>>(
      `SELECT c.id, c.name, c.country_code, c.currency, c.created_at,
              (SELECT count(*)::int FROM api_keys k WHERE k.company_id = c.id AND k.revoked_at IS NULL) AS active_keys
         FROM companies c
        ORDER BY c.created_at, c.id`,
    );
    return rows.map((row) => ({
      ...toCompany(row),
      createdAt: row.created_at.toISOString(),
      activeApiKeys: row.active_keys,
    }));
  }

  async exists(): Promise<boolean> {
    const rows = await this.txHost.tx.query<unknown[]>(`SELECT 1 FROM companies LIMIT 1`);
    return rows.length > 0;
  }
}
