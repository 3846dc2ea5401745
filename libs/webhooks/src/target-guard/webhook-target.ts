import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { nonPublicAddressKind } from './target-address';

/** A resolved address a delivery may connect to. */
export interface TargetAddress {
  address: string;
  family: 4 | 6;
}

/** Why a webhook URL may not be used, in words a client can act on. */
export class ForbiddenTargetError extends Error {}

/** The host of a URL without IPv6 brackets, lower case. */
export function hostOf(url: URL): string {
  const host = url.hostname.toLowerCase();
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Checks what can be checked without DNS: the scheme, credentials in the URL, and hosts that
 * are (or name) non-public addresses. `allowPrivate` keeps only the scheme rule.
 * @throws ForbiddenTargetError naming the reason
 */
export function assertAllowedUrl(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ForbiddenTargetError('url must use http or https');
  }
  if (allowPrivate) return;
  const host = hostOf(url);
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.') {
    throw new ForbiddenTargetError('url must not name localhost');
  }
  if (isIP(host) !== 0) {
    const kind = nonPublicAddressKind(host);
    if (kind !== null) throw new ForbiddenTargetError(`url must not target a ${kind} address`);
  }
}

/**
 * Resolves the URL's host and checks every address it resolves to: one non-public address
 * refuses the whole name, so a record set mixing public and private addresses cannot be used
 * to reach the private one. The caller connects to the returned address (never resolving the
 * name again), so a DNS answer that changes between check and connect (rebinding) cannot
 * bypass the check.
 * @throws ForbiddenTargetError when the host is, or resolves to, a non-public address
 * @throws Error when the name does not resolve
 */
export async function resolveAllowedTarget(url: URL, allowPrivate: boolean): Promise<TargetAddress> {
  assertAllowedUrl(url, allowPrivate);
  const host = hostOf(url);
  const literal = isIP(host);
  const addresses: TargetAddress[] =
    literal !== 0
      ? [{ address: host, family: literal as 4 | 6 }]
      : (await lookup(host, { all: true, order: 'verbatim' })).map((entry) => ({
          address: entry.address,
          family: entry.family as 4 | 6,
        }));
  if (addresses.length === 0) throw new Error(`${host} did not resolve to any address`);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const kind = nonPublicAddressKind(address);
      if (kind !== null) throw new ForbiddenTargetError(`url resolves to a ${kind} address`);
    }
  }
  return addresses[0];
}
