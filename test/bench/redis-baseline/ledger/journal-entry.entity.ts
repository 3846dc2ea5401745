import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  OneToMany,
  PrimaryGeneratedColumn,
} from 'typeorm';

@Entity('journal_entries')
export class JournalEntry {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'company_id', type: 'uuid' })
  companyId: string;

  @Column({ type: 'char', length: 3 })
  currency: string;

  @Column({ name: 'source_type' })
  sourceType: string;

  @Column({ name: 'source_id', type: 'uuid' })
  sourceId: string;

  @Column()
  memo: string;

  @OneToMany(() => JournalLine, (line) => line.entry, { cascade: ['insert'] })
  lines: JournalLine[];

  @CreateDateColumn({ name: 'posted_at', type: 'timestamptz' })
  postedAt: Date;
}

@Entity('journal_lines')
export class JournalLine {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @ManyToOne(() => JournalEntry, (entry) => entry.lines)
  @JoinColumn({ name: 'entry_id' })
  entry: JournalEntry;

  @Column()
  account: string;

  @Column({ type: 'bigint' })
  debit: number;

  @Column({ type: 'bigint' })
  credit: number;
}
