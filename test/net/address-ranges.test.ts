// The address rule of outbound HTTP (docs/api.md, "Prepared effects"): internal ranges, and the
// IPv6 forms that carry an IPv4 address, judged by the address they carry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { internalRange } from '../../src/net/address-ranges.js';

describe('internalRange()', () => {
  it('names the internal IPv4 ranges', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.0.1', 'link-local'],
      ['169.254.169.254', 'metadata'],
      ['100.64.0.1', 'shared (CGNAT)'],
      ['100.127.255.255', 'shared (CGNAT)'],
      ['0.0.0.0', 'this-network'],
      ['0.1.2.3', 'this-network'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'reserved'],
    ];
    for (const [address, range] of cases) assert.equal(internalRange(address), range, address);
  });

  it('names the internal IPv6 ranges', () => {
    const cases: [string, string][] = [
      ['::1', 'loopback'],
      ['[::1]', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['::', 'unspecified'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456::1', 'unique-local'],
      ['fd00:ec2::254', 'metadata'],
      ['ff02::1', 'multicast'],
    ];
    for (const [address, range] of cases) assert.equal(internalRange(address), range, address);
  });

  it('judges an IPv6 address that carries an IPv4 one by the IPv4 address', () => {
    const cases: [string, string][] = [
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['[::ffff:7f00:1]', 'loopback'],
      ['0:0:0:0:0:ffff:a00:1', 'private'],
      ['::ffff:169.254.169.254', 'metadata'],
      ['::127.0.0.1', 'loopback'],
      ['::a9fe:a9fe', 'metadata'],
      ['::ffff:0:10.0.0.1', 'private'],
      ['64:ff9b::7f00:1', 'loopback'],
      ['64:ff9b::c0a8:101', 'private'],
      ['2002:7f00:1::', 'loopback'],
      ['2002:a9fe:a9fe::1', 'metadata'],
    ];
    for (const [address, range] of cases) assert.equal(internalRange(address), range, address);
  });

  it('finds public addresses in no range, and a name is not an address', () => {
    for (const address of [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '2606:2800:220:1:248:1893:25c8:1946',
      '::ffff:93.184.216.34',
      '64:ff9b::808:808',
    ])
      assert.equal(internalRange(address), undefined, address);
    assert.equal(internalRange('example.com'), 'not an IP address');
  });
});
