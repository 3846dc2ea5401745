import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  OneToMany,
  PrimaryGeneratedColumn,
} from 'typeorm';

/** bigint columns come back from pg as strings; amounts here are safe integers. */
const bigintAsNumber = { to: (value: number) => value, from: (value: string) => Number(value) };

export interface VatBreakdownRow {
  vatRate: string;
  netAmount: number;
  vatAmount: number;
}

@Entity('invoices')
export class Invoice {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'company_id', type: 'uuid' })
  companyId: string;

  @Column()
  series: string;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  sequence: number;

  @Column()
  number: string;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ name: 'issue_date', type: 'date' })
  issueDate: string;

  @Column({ name: 'due_date', type: 'date', nullable: true })
  dueDate: string | null;

  @Column({ type: 'jsonb' })
  customer: { name: string; vatId?: string; countryCode: string; address?: string; email?: string };

  @Column({ type: 'text', nullable: true })
  notes: string | null;

  @Column({ name: 'vat_breakdown', type: 'jsonb' })
  vatBreakdown: VatBreakdownRow[];

  @Column({ name: 'net_total', type: 'bigint', transformer: bigintAsNumber })
  netTotal: number;

  @Column({ name: 'vat_total', type: 'bigint', transformer: bigintAsNumber })
  vatTotal: number;

  @Column({ name: 'gross_total', type: 'bigint', transformer: bigintAsNumber })
  grossTotal: number;

  @OneToMany(() => InvoiceLine, (line) => line.invoice, { cascade: ['insert'] })
  lines: InvoiceLine[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity('invoice_lines')
export class InvoiceLine {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @ManyToOne(() => Invoice, (invoice) => invoice.lines)
  @JoinColumn({ name: 'invoice_id' })
  invoice: Invoice;

  @Column({ type: 'int' })
  position: number;

  @Column()
  description: string;

  @Column({ type: 'numeric' })
  quantity: string;

  @Column({ name: 'unit_price', type: 'bigint', transformer: bigintAsNumber })
  unitPrice: number;

  @Column({ name: 'vat_rate', type: 'numeric' })
  vatRate: string;

  @Column({ name: 'net_amount', type: 'bigint', transformer: bigintAsNumber })
  netAmount: number;
}
