import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * SHA-256 over the RFC 8785 (JCS) canonical JSON of a normalized request. Key order,
 * whitespace and number formatting cannot change it; any field value can.
 * `undefined` members are dropped, exactly as JSON would drop them.
 * @throws Error when the payload cannot be represented as JSON (a programming mistake)
 */
export function fingerprintOf(normalizedRequest: unknown): Buffer {
  const canonical = canonicalize(JSON.parse(JSON.stringify(normalizedRequest ?? null)));
  if (canonical === undefined) throw new Error('request payload has no JSON representation');
  return createHash('sha256').update(canonical, 'utf8').digest();
}

/**
 * SHA-256 of a request body's exact bytes: what a byte-identical retry is recognised by before
 * its body is parsed or validated (`KnownRequest.requestDigest`).
 */
export function requestDigestOf(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}
