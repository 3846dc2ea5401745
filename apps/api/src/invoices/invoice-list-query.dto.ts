import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, registerDecorator } from 'class-validator';
import { CodePointLength, type Metadata, metadataProblem } from '@ledgerkey/database';
import { IsCalendarDate } from '@ledgerkey/documents';
import {
  INVOICE_CREDIT_STATUSES,
  INVOICE_PAYMENT_STATUSES,
  type InvoiceCreditStatus,
  type InvoiceListFilter,
  type InvoicePaymentStatus,
} from '@ledgerkey/invoicing';
import { IsNotBefore, ListQueryDto } from '../list-query.dto';

/** `GET /v1/sales/invoices`: pagination plus filters; every filter given narrows the list (AND). */
export class InvoiceListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ example: 'order-1041', description: 'The invoice of this order (at most one)' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 100)
  orderId?: string;

  @ApiPropertyOptional({ example: 'LT100001234567', description: "Invoices to this customer's VAT id" })
  @IsOptional()
  @Matches(/^[A-Z0-9]{2,30}$/, { message: 'customerVatId must be 2–30 upper-case letters and digits' })
  customerVatId?: string;

  @ApiPropertyOptional({ format: 'date', example: '2026-11-01', description: 'Issued on or after' })
  @IsOptional()
  @IsCalendarDate()
  issueDateFrom?: string;

  @ApiPropertyOptional({ format: 'date', example: '2026-11-30', description: 'Issued on or before' })
  @IsOptional()
  @IsCalendarDate()
  @IsNotBefore('issueDateFrom')
  issueDateTo?: string;

  @ApiPropertyOptional({ enum: INVOICE_PAYMENT_STATUSES })
  @IsOptional()
  @IsIn(INVOICE_PAYMENT_STATUSES, {
    message: `paymentStatus must be one of ${INVOICE_PAYMENT_STATUSES.join(', ')}`,
  })
  paymentStatus?: InvoicePaymentStatus;

  @ApiPropertyOptional({ enum: INVOICE_CREDIT_STATUSES })
  @IsOptional()
  @IsIn(INVOICE_CREDIT_STATUSES, {
    message: `creditStatus must be one of ${INVOICE_CREDIT_STATUSES.join(', ')}`,
  })
  creditStatus?: InvoiceCreditStatus;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { crmId: 'deal-3120' },
    description: 'Invoices whose metadata holds every pair given: `?metadata[crmId]=deal-3120`',
    // Kept on the parameter by @nestjs/swagger (not in its typings): `metadata[key]=value`.
    ...({ style: 'deepObject', explode: true } as object),
  })
  @IsOptional()
  @IsMetadataFilter()
  metadata?: Metadata;

  override filter(): InvoiceListFilter {
    const { orderId, customerVatId, issueDateFrom, issueDateTo, paymentStatus, creditStatus, metadata } =
      this;
    return { orderId, customerVatId, issueDateFrom, issueDateTo, paymentStatus, creditStatus, metadata };
  }
}

/** `metadata[key]=value` pairs as metadata itself is bounded (one value per key). */
function IsMetadataFilter(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isMetadataFilter',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {},
      validator: {
        validate: (value: unknown) => metadataProblem(value) === null,
        defaultMessage: (args) =>
          `${args?.property ?? 'metadata'} ${metadataProblem(args?.value)} (send metadata[key]=value, once per key)`,
      },
    });
  };
}
