import { nonPublicAddressKind } from './target-address';

describe('nonPublicAddressKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.10', 'private'],
    ['100.64.0.1', 'CGNAT'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:7f00:1', 'IPv4-mapped'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['64:ff9b::7f00:1', 'NAT64'],
    ['2002:7f00:1::', '6to4'],
    ['2001:0:4136:e378::1', 'IETF protocol assignment'],
    ['fd00::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['localhost', 'not an IP address'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicAddressKind(address)).toBe(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450::1'])(
    '%s is public',
    (address) => {
      expect(nonPublicAddressKind(address)).toBeNull();
    },
  );
});
