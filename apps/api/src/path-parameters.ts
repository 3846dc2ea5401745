import { NotFoundException } from '@nestjs/common';
import type { ILayer, Router } from 'express-serve-static-core';
import type { RequestHandler } from 'express';
import { RequestValidationError } from './request-validation';

/** What the router's layers (router 2.x) answer when asked whether a path is theirs. */
interface MatchingLayer extends ILayer {
  route?: ILayer['route'] & { methods: Record<string, boolean | undefined> };
  /** A wildcard parameter (`*splat`) is the array of its segments. */
  match(path: string): { params: Record<string, string | string[]> } | false;
}

/** As the router's Route decides it (HEAD is served by GET routes). */
function handlesMethod(methods: Record<string, boolean | undefined>, method: string): boolean {
  const name = method.toLowerCase();
  return Boolean(methods._all || methods[name] || (name === 'head' && methods.get));
}

const MARKER = '\u{E000}undecodable';

function isDecodable(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/**
 * The names of the route parameters that take the marked segments: each undecodable segment is
 * replaced by a marker that decodes as itself, and the router's own route layers are asked
 * which named parameter of a route for this method takes it. Wildcards (the framework's catch-all middleware route) do not
 * count. Empty when no route does.
 */
function parametersTaking(router: Router, method: string, markedPath: string): string[] {
  for (const layer of router.stack as MatchingLayer[]) {
    if (layer.route === undefined || !handlesMethod(layer.route.methods, method)) continue;
    const match = layer.match(markedPath);
    if (match === false) continue;
    const names = Object.entries(match.params)
      .filter(([, value]) => typeof value === 'string' && value.includes(MARKER))
      .map(([name]) => name);
    if (names.length > 0) return names;
  }
  return [];
}

/**
 * Express decodes path parameters with decodeURIComponent and turns a failure (`%ZZ`, `%C0%80`)
 * into a bare 400 that names nothing. Checked before routing instead: a parameter that is not
 * percent-encoded UTF-8 answers `400 validation_failed` naming it (`errors[{ field: "id" }]`);
 * a path that no route takes is `404 not_found`, as it would be with any other text.
 */
export function pathParameterDecoding(): RequestHandler {
  return (request, _response, next) => {
    const segments = request.path.split('/');
    if (segments.every(isDecodable)) {
      next();
      return;
    }
    const marked = segments.map((segment) => (isDecodable(segment) ? segment : MARKER)).join('/');
    const fields = parametersTaking(request.app.router, request.method, marked);
    next(
      fields.length === 0
        ? new NotFoundException()
        : new RequestValidationError(
            fields.map((field) => ({ field, message: 'must be percent-encoded UTF-8 (as in RFC 3986)' })),
          ),
    );
  };
}
