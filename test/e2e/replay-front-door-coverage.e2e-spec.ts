import {
  type CanActivate,
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type MiddlewareConsumer,
  Module,
  type NestInterceptor,
  type NestMiddleware,
  type NestModule,
  type PipeTransform,
} from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp } from '../support/test-app';

/**
 * One request path: a replay answered by the replay front door meets everything a first request
 * meets, or the application does not start. An application extended with a global guard, a global
 * interceptor, a global pipe or a middleware the front door does not know refuses to start; without a replay
 * cache the front door stands aside, the same application starts, and replays of an `@Idempotent`
 * route meet the added guard, interceptor and middleware like first requests.
 */
const CREATE = '/v1/sales/invoices/create';

/** What the added pieces saw, by path. */
const seen: string[] = [];

function pathOf(context: ExecutionContext): string {
  return context.switchToHttp().getRequest<{ path: string }>().path;
}

@Injectable()
class AuditGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    seen.push(`guard ${pathOf(context)}`);
    return true;
  }
}

@Injectable()
class AuditInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    seen.push(`interceptor ${pathOf(context)}`);
    return next.handle();
  }
}

@Injectable()
class AuditMiddleware implements NestMiddleware {
  use(request: { originalUrl: string }, _response: unknown, next: () => void): void {
    seen.push(`middleware ${request.originalUrl}`);
    next();
  }
}

@Injectable()
class AuditPipe implements PipeTransform {
  transform(value: unknown): unknown {
    return value;
  }
}

@Module({ providers: [{ provide: APP_GUARD, useClass: AuditGuard }] })
class GlobalGuardModule {}

@Module({ providers: [{ provide: APP_INTERCEPTOR, useClass: AuditInterceptor }] })
class GlobalInterceptorModule {}

@Module({ providers: [{ provide: APP_PIPE, useClass: AuditPipe }] })
class GlobalPipeModule {}

@Module({})
class MiddlewareModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(AuditMiddleware).forRoutes('*');
  }
}

describe('an application extended with what the replay front door does not know', () => {
  it.each([
    { added: 'a global guard', module: GlobalGuardModule, named: /the global guard AuditGuard/ },
    {
      added: 'a global interceptor',
      module: GlobalInterceptorModule,
      named: /the global interceptor AuditInterceptor/,
    },
    { added: 'a global pipe', module: GlobalPipeModule, named: /the global pipe AuditPipe/ },
    {
      added: 'a middleware',
      module: MiddlewareModule,
      named: /the middleware handler before every answered route/,
    },
  ])('refuses to start with $added', async ({ module, named }) => {
    const start = startTestApp({}, { extensions: [module] });
    await expect(start).rejects.toThrow(
      /the replay front door cannot answer replays the way the application would/,
    );
    await expect(start).rejects.toThrow(named);
  });

  it('starts without a replay cache (no front door), and replays meet the guard, interceptor and middleware', async () => {
    const t = await startTestApp(
      { IDEMPOTENCY_REPLAY_CACHE_SIZE: '0' },
      { extensions: [GlobalGuardModule, GlobalInterceptorModule, MiddlewareModule] },
    );
    try {
      const company = await t.newCompany();
      const key = newKey();
      const body = anInvoice().withLine().build();
      seen.length = 0;
      const first = await t.http.post(CREATE).set(company.auth).set('Idempotency-Key', key).send(body);
      const replay = await t.http.post(CREATE).set(company.auth).set('Idempotency-Key', key).send(body);

      expect(first.status).toBe(201);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      const once = [`middleware ${CREATE}`, `guard ${CREATE}`, `interceptor ${CREATE}`];
      expect(seen).toEqual([...once, ...once]);
    } finally {
      await t.close();
    }
  });
});
