import { Injectable, type PipeTransform } from '@nestjs/common';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class ResourceNotFoundError extends Error {
  readonly code = 'not_found';
  constructor() {
    super('No such resource.');
  }
}

/** A path id that cannot name any resource answers 404 like an unknown one, never 400/500. */
@Injectable()
export class ResourceIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!UUID.test(value)) throw new ResourceNotFoundError();
    return value.toLowerCase();
  }
}
