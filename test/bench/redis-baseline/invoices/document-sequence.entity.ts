import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The next gapless number of a (company, series): a counter row, locked until commit. */
@Entity('document_sequences')
export class DocumentSequence {
  @PrimaryColumn({ name: 'company_id', type: 'uuid' })
  companyId: string;

  @PrimaryColumn()
  series: string;

  @Column({ name: 'last_value', type: 'bigint' })
  lastValue: string;
}
