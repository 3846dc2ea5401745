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
  // A fully qualified name may end with the root's dot: `foo.localhost.` is `foo.localhost`.
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || name.endsWith('.localhost')) {
    throw new ForbiddenTargetError('url must not name localhost');
  }
  if (isIP(host) !== 0) {
    const kind = nonPublicAddressKind(host);
    if (kind !== null) throw new ForbiddenTargetError(`url must not target a ${kind} address`);
  }
}

/**
 * What a delivery records when the URL's name did not lead to public addresses only: the same
 * words whether the name resolved to a private address, did not resolve, or resolution failed,
 * so the attempts list tells a tenant nothing about the network's own names.
 */
export const NAME_NOT_PUBLIC = 'url host did not resolve to public addresses only';

/**
 * Resolves the URL's host and checks every address it resolves to: one non-public address
 * refuses the whole name, so a record set mixing public and private addresses cannot be used
 * to reach the private one. The caller connects to the returned address (never resolving the
 * name again), so a DNS answer that changes between check and connect (rebinding) cannot
 * bypass the check.
 * @throws ForbiddenTargetError when the host is a non-public address or names localhost (saying
 *   which), or is a name that did not resolve to public addresses only (`NAME_NOT_PUBLIC`)
 * @throws Error when the name does not resolve and private targets are allowed
 */
export async function resolveAllowedTarget(url: URL, allowPrivate: boolean): Promise<TargetAddress> {
  assertAllowedUrl(url, allowPrivate);
  const host = hostOf(url);
  const literal = isIP(host);
  if (literal !== 0) return { address: host, family: literal as 4 | 6 };
  let addresses: TargetAddress[];
  try {
    addresses = (await lookup(host, { all: true, order: 'verbatim' })).map((entry) => ({
      address: entry.address,
      family: entry.family as 4 | 6,
    }));
  } catch (error) {
    if (allowPrivate) throw error;
    throw new ForbiddenTargetError(NAME_NOT_PUBLIC, { cause: error });
  }
  const refused =
    addresses.length === 0 || addresses.some(({ address }) => nonPublicAddressKind(address) !== null);
  if (refused && !allowPrivate) throw new ForbiddenTargetError(NAME_NOT_PUBLIC);
  if (addresses.length === 0) throw new Error(`${host} did not resolve to any address`);
  return addresses[0];
}
