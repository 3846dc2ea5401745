import type { MigrationInterface } from 'typeorm';
import { InitialSchema1764500000000 } from './1764500000000-initial-schema';
import { CreditNotesSettlementsPurchases1764600000000 } from './1764600000000-credit-notes-settlements-purchases';
import { Events1764700000000 } from './1764700000000-events';
import { Webhooks1764800000000 } from './1764800000000-webhooks';
import { IdempotencyClaim1764900000000 } from './1764900000000-idempotency-claim';
import { DocumentNamespacesSupplierIdentity1765000000000 } from './1765000000000-document-namespaces-supplier-identity';
import { TextBounds1765100000000 } from './1765100000000-text-bounds';
import { EventPositions1765200000000 } from './1765200000000-event-positions';
import { IdempotencyStates1765300000000 } from './1765300000000-idempotency-states';
import { SealedSecrets1765400000000 } from './1765400000000-sealed-secrets';
import { TenantKeys1765500000000 } from './1765500000000-tenant-keys';
import { OutboxDeliveries1765600000000 } from './1765600000000-outbox-deliveries';
import { RequestDigest1765700000000 } from './1765700000000-request-digest';
import { Payments1765800000000 } from './1765800000000-payments';
import { CompanyProfileSellerSnapshot1765900000000 } from './1765900000000-company-profile-seller-snapshot';
import { ApiKeyScopes1766100000000 } from './1766100000000-api-key-scopes';
import { Metadata1766200000000 } from './1766200000000-metadata';
import { ProviderEvents1766300000000 } from './1766300000000-provider-events';
import { IsafSettingsFixedAssets1766700000000 } from './1766700000000-isaf-settings-fixed-assets';
import { PaymentRefundsNoTruncate1767100000000 } from './1767100000000-payment-refunds-no-truncate';
import { CompanySellerFunction1767200000000 } from './1767200000000-company-seller-function';
import { PlpgsqlRowFunctions1767300000000 } from './1767300000000-plpgsql-row-functions';
import { ClaimNewIdempotencyKey1767400000000 } from './1767400000000-claim-new-idempotency-key';

/** Every migration, oldest first. Listed explicitly so compiled and Jest runs agree. */
export const MIGRATIONS: Array<new () => MigrationInterface> = [
  InitialSchema1764500000000,
  CreditNotesSettlementsPurchases1764600000000,
  Events1764700000000,
  Webhooks1764800000000,
  IdempotencyClaim1764900000000,
  DocumentNamespacesSupplierIdentity1765000000000,
  TextBounds1765100000000,
  EventPositions1765200000000,
  IdempotencyStates1765300000000,
  SealedSecrets1765400000000,
  TenantKeys1765500000000,
  OutboxDeliveries1765600000000,
  RequestDigest1765700000000,
  Payments1765800000000,
  CompanyProfileSellerSnapshot1765900000000,
  ApiKeyScopes1766100000000,
  Metadata1766200000000,
  ProviderEvents1766300000000,
  IsafSettingsFixedAssets1766700000000,
  PaymentRefundsNoTruncate1767100000000,
  CompanySellerFunction1767200000000,
  PlpgsqlRowFunctions1767300000000,
  ClaimNewIdempotencyKey1767400000000,
];
