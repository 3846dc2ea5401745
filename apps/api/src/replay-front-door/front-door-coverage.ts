import type { INestApplication } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE, type DiscoveryService } from '@nestjs/core';
import { InFlightHandlers } from '../in-flight-handlers';
import { ProblemDetailsFilter } from '../problem-details.filter';
import type { PipelineMiddleware } from '../request-pipeline';
import { requestValidationPipe } from '../request-validation';

/** A global enhancer of the application's, and how a replay answered by the front door meets it. */
interface KnownEnhancer {
  name: string;
  is(instance: unknown): boolean;
  because: string;
}

/** Every global guard, interceptor, pipe and filter the application registers (app.module.ts). */
const GLOBAL_ENHANCERS: readonly KnownEnhancer[] = [
  {
    name: 'ProblemDetailsFilter',
    is: (instance) => instance instanceof ProblemDetailsFilter,
    because: 'it renders errors; a replay sends a stored answer',
  },
  {
    name: 'the request validation pipe',
    is: (instance) => instance === requestValidationPipe,
    because: "pipes run on a handler's arguments, and the idempotency interceptor replays before them",
  },
  {
    name: 'InFlightHandlers',
    is: (instance) => instance instanceof InFlightHandlers,
    because: 'it lets a stop wait for running route handlers; a replay runs none',
  },
];

/**
 * Middleware that modules register (Nest mounts each as a route for every path), and why a replay
 * may skip it. Express identifies them by nothing but their position, so they are counted: one
 * more before a route than listed here is one the front door does not know.
 */
const MODULE_MIDDLEWARE: readonly { module: string; because: string }[] = [
  {
    module: "nestjs-pino's LoggerModule",
    because:
      "it binds the request's logger for Nest Logger calls made while handling it; a replay makes none",
  },
];

/**
 * Global enhancers are APP_GUARD, APP_INTERCEPTOR, APP_PIPE and APP_FILTER providers, in any
 * module: Nest registers each under its kind's token followed by an id. `app.useGlobal*()` is not
 * used (eslint forbids it), so these are all of them.
 */
const GLOBAL_ENHANCER_KINDS = [APP_GUARD, APP_INTERCEPTOR, APP_PIPE, APP_FILTER];

/** A layer of Express's router (router 2.x), as `app.router.stack` lists it. */
interface RouterLayer {
  name: string;
  handle: unknown;
  route?: { path: string; methods: Record<string, boolean | undefined> };
  match(path: string): unknown;
}

/**
 * What a replay answered by the front door would skip: each global enhancer the application has
 * and `GLOBAL_ENHANCERS` does not know, and each middleware or route that Express would run before
 * one of `paths` that is not in `pipeline` (a module's middleware, an `app.use` outside the
 * pipeline). Empty when the front door meets everything the framework's path does.
 */
export function unknownOnReplay(
  app: INestApplication,
  discovery: DiscoveryService,
  pipeline: readonly PipelineMiddleware[],
  paths: readonly string[],
): string[] {
  const unknown = new Set<string>();
  for (const wrapper of discovery.getProviders()) {
    const token = String(wrapper.token);
    const kind = GLOBAL_ENHANCER_KINDS.find((name) => token.startsWith(`${name} `));
    if (kind === undefined || isPassThrough(wrapper.instance)) continue;
    if (GLOBAL_ENHANCERS.some((known) => known.is(wrapper.instance))) continue;
    unknown.add(`the global ${kind.slice('APP_'.length).toLowerCase()} ${nameOf(wrapper.instance)}`);
  }
  const mounted = new Set<unknown>(pipeline.map((middleware) => middleware.handler));
  const { stack } = (app.getHttpAdapter().getInstance() as { router: { stack: RouterLayer[] } }).router;
  // Before the pipeline: what the HTTP adapter mounts when it is made (Nest's request hooks, unset here).
  const first = stack.findIndex((layer) => mounted.has(layer.handle));
  // What a replay would skip → the answered routes it stands before.
  const skipped = new Map<string, string[]>();
  const before = (what: string, path: string): void => {
    skipped.set(what, [...(skipped.get(what) ?? []), path]);
  };
  for (const path of paths) {
    let moduleMiddleware = 0;
    for (const layer of stack.slice(Math.max(first, 0))) {
      if (!layer.match(path)) continue;
      const { route } = layer;
      if (route === undefined) {
        if (!mounted.has(layer.handle)) before(`the middleware ${layer.name || 'anonymous'}`, path);
        continue;
      }
      if (!(route.methods._all || route.methods.post)) continue;
      // The route itself: what Express runs after it is the route's, met by the front door's route checks.
      if (route.path === path) break;
      moduleMiddleware += 1;
      if (moduleMiddleware > MODULE_MIDDLEWARE.length) {
        before(`module middleware number ${moduleMiddleware} (known: ${MODULE_MIDDLEWARE.length})`, path);
      }
    }
  }
  for (const [what, skippedOn] of skipped) {
    const where = skippedOn.length === paths.length ? 'every answered route' : skippedOn.join(', ');
    unknown.add(`${what} before ${where}`);
  }
  return [...unknown];
}

/**
 * A global guard that admits and an interceptor that passes on without reading anything of the
 * request (nestjs-cls registers such when its own guard and interceptor are not mounted): asked
 * with a context that throws on any use, the guard answers true and the interceptor hands back
 * what `next.handle()` gave.
 */
function isPassThrough(instance: unknown): boolean {
  if (
    instance === null ||
    typeof instance !== 'object' ||
    Object.getPrototypeOf(instance) !== Object.prototype
  ) {
    return false;
  }
  const untouchable = new Proxy(
    {},
    {
      get() {
        throw new Error('read');
      },
    },
  );
  const handled = Symbol('handled');
  const enhancer = instance as {
    canActivate?: (context: unknown) => unknown;
    intercept?: (context: unknown, next: unknown) => unknown;
  };
  try {
    if (typeof enhancer.canActivate === 'function') return enhancer.canActivate(untouchable) === true;
    if (typeof enhancer.intercept === 'function') {
      return enhancer.intercept(untouchable, { handle: () => handled }) === handled;
    }
  } catch {
    return false;
  }
  return false;
}

function nameOf(instance: unknown): string {
  return (instance as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'anonymous';
}
