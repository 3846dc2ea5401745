import { createHash } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Request } from 'express';
import type { Repository } from 'typeorm';
import { Company } from './company.entity';

export type AuthenticatedRequest = Request & { company: Company };

const CACHE_MS = 30_000;

/** Bearer API key → company; verified keys are cached for 30 s per process. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly cache = new Map<string, { company: Company; until: number }>();

  constructor(@InjectRepository(Company) private readonly companies: Repository<Company>) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!token) throw new UnauthorizedException();
    const hash = createHash('sha256').update(token).digest('hex');
    const cached = this.cache.get(hash);
    if (cached && cached.until > Date.now()) {
      request.company = cached.company;
      return true;
    }
    const company = await this.companies.findOneBy({ apiKeyHash: hash });
    if (!company) throw new UnauthorizedException();
    this.cache.set(hash, { company, until: Date.now() + CACHE_MS });
    request.company = company;
    return true;
  }
}
