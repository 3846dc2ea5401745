import { parse } from 'node:querystring';

const BRACKETED = /^([A-Za-z]+)\[([^[\]]*)\]$/;
/** Query members that take `name[key]=value` pairs (Stripe's style), e.g. `metadata[crmId]=deal-1`. */
const KEYED_MEMBERS = new Set(['metadata']);

/**
 * Express's "simple" query parser (node:querystring), plus `metadata[key]=value` folded into a
 * `metadata` object, so the list DTOs can validate it. Any other bracketed name stays a plain,
 * unknown member (400 validation_failed), as before.
 */
export function parseQuery(text: string): Record<string, unknown> {
  const parsed = parse(text) as Record<string, string | string[]>;
  const query: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(parsed)) {
    const match = BRACKETED.exec(name);
    if (match === null || !KEYED_MEMBERS.has(match[1])) {
      query[name] = value;
      continue;
    }
    const member = match[1];
    const existing = query[member] ?? parsed[member];
    // `metadata=x` and `metadata[k]=v` together: keep the plain value, which fails validation.
    if (typeof existing === 'string' || Array.isArray(existing)) continue;
    const pairs = (existing as Record<string, unknown> | undefined) ?? {};
    // An own member even for a key like `__proto__`: input never reaches a prototype.
    Object.defineProperty(pairs, match[2], { value, enumerable: true, writable: true, configurable: true });
    query[member] = pairs;
  }
  return query;
}
