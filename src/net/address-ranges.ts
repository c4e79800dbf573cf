/**
 * The address rule of outbound HTTP (docs/api.md, "Prepared effects"): which addresses are
 * internal to the host or its network, and so refused unless allowed. An IPv6 address that
 * carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) is judged by the IPv4 address it carries.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** An IPv4 range: its first address as a 32-bit number, its prefix length and its name. */
type Range4 = readonly [number, number, string];

const v4 = (text: string): number =>
  text.split('.').reduce((value, part) => value * 256 + Number(part), 0);

const RANGES_4: readonly Range4[] = [
  [v4('0.0.0.0'), 8, 'this-network'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'shared (CGNAT)'],
  [v4('127.0.0.0'), 8, 'loopback'],
  // The cloud metadata address (169.254.169.254) is link-local.
  [v4('169.254.0.0'), 16, 'link-local'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'IETF protocol assignment'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved'],
];

function inRange4(address: number, [first, bits]: Range4): boolean {
  const size = 2 ** (32 - bits);
  return address >= first && address < first + size;
}

/** The name of the internal range an IPv4 address is in, or undefined for a public one. */
function range4(address: number): string | undefined {
  if (address === v4('169.254.169.254')) return 'metadata';
  return RANGES_4.find((range) => inRange4(address, range))?.[2];
}

/** The 8 groups of an IPv6 address (its last 32 bits may be written as IPv4). */
function groups6(text: string): number[] {
  let address = text.replace(/%.*$/, '');
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
  if (tail !== undefined) {
    const value = v4(tail);
    address = `${address.slice(0, -tail.length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = '', rest] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const middle = rest === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => parseInt(group, 16));
}

/** The IPv4 address (as a number) an IPv6 address carries, if it is one of those forms. */
function embedded4(groups: readonly number[]): number | undefined {
  const [a, b, c, d, e, f, g, h] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const low = g * 65_536 + h;
  const zeroHead = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated).
  if (zeroHead && (f === 0xffff || f === 0)) return low;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0xffff && f === 0) return low;
  // 64:ff9b::/96 (NAT64) and 64:ff9b:1::/48 (local NAT64).
  if (a === 0x64 && b === 0xff9b) return low;
  // 2002::/16 (6to4): the IPv4 address follows the prefix.
  if (a === 0x2002) return b * 65_536 + c;
  return undefined;
}

/** The name of the internal range an IPv6 address is in, or undefined for a public one. */
function range6(groups: readonly number[]): string | undefined {
  if (groups.every((group) => group === 0)) return 'unspecified';
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return 'loopback';
  const carried = embedded4(groups);
  if (carried !== undefined) return range4(carried);
  const [a] = groups as [number];
  // fd00:ec2::254, the cloud metadata address over IPv6, is unique-local.
  if (groups.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) return 'metadata';
  if ((a & 0xfe00) === 0xfc00) return 'unique-local';
  if ((a & 0xffc0) === 0xfe80) return 'link-local';
  if ((a & 0xffc0) === 0xfec0) return 'site-local';
  if ((a & 0xff00) === 0xff00) return 'multicast';
  // 100::/64 (discard) and 2001:db8::/32 (documentation) reach nothing public.
  if (a === 0x100 && groups.slice(1, 4).every((group) => group === 0)) return 'discard';
  if (a === 0x2001 && groups[1] === 0xdb8) return 'documentation';
  return undefined;
}

/**
 * The name of the internal range `address` (an IP address as text: IPv4, or IPv6 with or without
 * brackets) is in: `loopback`, `private`, `link-local`, `unique-local`, `metadata`, `shared
 * (CGNAT)`, `this-network`, `unspecified`, `multicast`... or undefined for a public address.
 * Anything that is not an IP address is `not an IP address`.
 */
export function internalRange(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return range4(v4(bare));
  if (isIPv6(bare)) return range6(groups6(bare));
  return 'not an IP address';
}
