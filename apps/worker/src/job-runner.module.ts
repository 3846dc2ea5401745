import { Module } from '@nestjs/common';
import { JobRunner } from './job-runner';

/** The job runner; needs WebhooksModule (global) in the application. Idle until `start`. */
@Module({ providers: [JobRunner], exports: [JobRunner] })
export class JobRunnerModule {}
