import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request } from 'express';
import { BASELINE_CONFIG, type BaselineConfig } from '../baseline-config';

@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(@Inject(BASELINE_CONFIG) private readonly config: BaselineConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (request.headers.authorization !== `Bearer ${this.config.adminToken}`)
      throw new UnauthorizedException();
    return true;
  }
}
