import { BlockList, isIP } from 'node:net';

/**
 * Address ranges a webhook may never reach unless private targets are allowed: everything
 * that is not ordinary public unicast. IPv6 forms that embed an IPv4 address (mapped,
 * compatible, NAT64, 6to4, Teredo) are refused outright rather than unpacked: public
 * receivers do not publish them, and refusing them closes every "private IPv4 in IPv6
 * clothing" bypass at once.
 */
const NON_PUBLIC: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'CGNAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignment'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', '6to4 relay'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['::', 96, 'ipv6', 'IPv4-compatible'],
  ['::ffff:0:0', 96, 'ipv6', 'IPv4-mapped'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64'],
  ['64:ff9b:1::', 48, 'ipv6', 'NAT64 (local)'],
  ['100::', 64, 'ipv6', 'discard'],
  ['2001::', 23, 'ipv6', 'IETF protocol assignment'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['2002::', 16, 'ipv6', '6to4'],
  ['3fff::', 20, 'ipv6', 'documentation'],
  ['fc00::', 7, 'ipv6', 'unique local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const RANGES = NON_PUBLIC.map(([network, prefix, family, kind]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, kind };
});

/**
 * Why an IP address may not be a webhook target, or null when it is public unicast.
 * Anything that is not a valid IP literal is refused too ("not an IP address").
 */
export function nonPublicAddressKind(address: string): string | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const version = isIP(bare);
  if (version === 0) return 'not an IP address';
  const family = version === 4 ? 'ipv4' : 'ipv6';
  for (const range of RANGES) {
    if (range.family === family && range.list.check(bare, family)) return range.kind;
  }
  return null;
}
