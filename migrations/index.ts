import type { MigrationInterface } from 'typeorm';
import { InitialSchema1764500000000 } from './1764500000000-initial-schema';

/** Every migration, oldest first. Listed explicitly so compiled and ts-jest runs agree. */
export const MIGRATIONS: Array<new () => MigrationInterface> = [InitialSchema1764500000000];
