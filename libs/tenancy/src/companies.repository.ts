import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import type { Company } from './company';
import { type CompanyProfile, storedProfileOf } from './company-profile/company-profile';

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

/** The profile's columns in the order of `profileParameters`. */
const PROFILE_COLUMNS = [
  'legal_name',
  'vat_id',
  'registration_number',
  'street',
  'city',
  'postal_code',
  'address_country_code',
  'iban',
  'email',
  'peppol_id',
] as const;

function profileParameters(profile: CompanyProfile): Array<string | null> {
  return [
    profile.legalName,
    profile.vatId,
    profile.registrationNumber,
    profile.address.street,
    profile.address.city,
    profile.address.postalCode,
    profile.address.countryCode,
    profile.iban,
    profile.email,
    profile.peppolId,
  ];
}

@Injectable()
export class CompaniesRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  @Transactional(Propagation.Mandatory)
  async insert(company: Omit<Company, 'id'>, profile: CompanyProfile): Promise<Company> {
    const id = randomUUID();
    await this.txHost.tx.query(
      `INSERT INTO companies (id, name, country_code, currency, ${PROFILE_COLUMNS.join(', ')})
       VALUES ($1, $2, $3, $4, ${PROFILE_COLUMNS.map((_, index) => `$${index + 5}`).join(', ')})`,
      [id, company.name, company.countryCode, company.currency, ...profileParameters(profile)],
    );
    return { id, ...company };
  }

  /**
   * The company's current profile: an unset legal name reads as the company's name, an unset
   * address country as its country (rows written before profiles existed, or by hand).
   * @returns null when there is no such company
   */
  async findProfile(companyId: string): Promise<CompanyProfile | null> {
    // company_seller() (migration 1767200000000) also gives documents their seller snapshot
    // inside their INSERT: one definition of the profile's defaults.
    const rows = await this.txHost.tx.query<{ seller: CompanyProfile | null }>(
      `SELECT company_seller($1) AS seller`,
      [companyId],
    );
    const seller = rows[0]?.seller;
    return seller ? storedProfileOf(seller) : null;
  }

  /** Replaces the whole profile (every member: absent ones become null). */
  @Transactional(Propagation.Mandatory)
  async replaceProfile(companyId: string, profile: CompanyProfile): Promise<void> {
    await this.txHost.tx.query(
      `UPDATE companies SET ${PROFILE_COLUMNS.map((column, index) => `${column} = $${index + 2}`).join(', ')}
        WHERE id = $1`,
      [companyId, ...profileParameters(profile)],
    );
  }

  async findById(companyId: string): Promise<Company | null> {
    const rows = await this.txHost.tx.query<CompanyRow>(
      `SELECT id, name, country_code, currency FROM companies WHERE id = $1`,
      [companyId],
    );
    return rows[0] ? toCompany(rows[0]) : null;
  }

  /** Every company, oldest first (operators' CLI). */
  async list(): Promise<CompanyListItem[]> {
    const rows = await this.txHost.tx.query<CompanyRow & { created_at: Date; active_keys: number }>(
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
    const rows = await this.txHost.tx.query<unknown>(`SELECT 1 FROM companies LIMIT 1`);
    return rows.length > 0;
  }
}
