import { Module } from '@nestjs/common';
import { JobRegistry } from './job-registry';
import { JobRunner } from './job-runner';

/**
 * The job queue of a process: the registry each lib's module registers its tasks in, and the
 * runner (idle until `start`). A static module: every importer shares the one registry.
 */
@Module({ providers: [JobRegistry, JobRunner], exports: [JobRegistry, JobRunner] })
export class JobsModule {}
