import { ApiProperty } from '@nestjs/swagger';
import { AggregateAmount } from '@ledgerkey/ledger';

export class VatRateRowView {
  @ApiProperty({ example: '21', description: 'VAT rate, percent (canonical decimal string)' })
  vatRate: string;
  @AggregateAmount('Sales net at this rate: invoices − credit notes', '10000') salesNet: string;
  @AggregateAmount('Output VAT at this rate: invoices − credit notes', '2100') salesVat: string;
  @AggregateAmount('Purchases net at this rate', '4000') purchasesNet: string;
  @AggregateAmount('Input VAT at this rate', '840') purchasesVat: string;
  @AggregateAmount('salesVat − purchasesVat', '1260') payable: string;
}

export class VatReportTotalsView {
  @AggregateAmount('Sales net: invoices − credit notes (= revenue in the ledger)', '10000') salesNet: string;
  @AggregateAmount('Output VAT (= the movement of vat_payable in the ledger)', '2100') salesVat: string;
  @AggregateAmount('Purchases net (= expense in the ledger)', '4000') purchasesNet: string;
  @AggregateAmount('Input VAT (= the movement of vat_receivable in the ledger)', '840') purchasesVat: string;
  @AggregateAmount('VAT payable for the period: salesVat − purchasesVat; negative is refundable', '1260')
  payable: string;
}

/** One currency's part of the report: VAT is declared per currency of the documents. */
export class VatReportCurrencyView {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ type: [VatRateRowView], description: 'Per VAT rate, highest first' })
  rates: VatRateRowView[];
  @ApiProperty({ type: VatReportTotalsView }) totals: VatReportTotalsView;
}

export class VatReportView {
  @ApiProperty({ enum: ['vat_report'] }) object: 'vat_report';
  @ApiProperty({ format: 'date', example: '2026-11-01' }) from: string;
  @ApiProperty({ format: 'date', example: '2026-11-30' }) to: string;
  @ApiProperty({
    type: [VatReportCurrencyView],
    description: 'Per currency with documents in the period (empty when there are none)',
  })
  currencies: VatReportCurrencyView[];
}
