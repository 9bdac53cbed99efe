import { isIPv4, isIPv6 } from 'node:net';

/**
 * What an IP address reaches. Only `public` is a destination on the internet; the others are
 * this host, a private network, or not a unicast destination at all.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'unspecified'
  | 'metadata'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

/**
 * The classes OUTBOUND_ALLOW_PRIVATE lets an outbound URL reach (this host and private networks);
 * metadata, multicast and broadcast addresses are never reached.
 */
export const PRIVATE_ADDRESS_CLASSES: ReadonlySet<AddressClass> = new Set([
  'loopback',
  'private',
  'link-local',
  'cgnat',
  'unspecified',
  'reserved',
]);

interface Range {
  bytes: number[];
  prefix: number;
  kind: AddressClass | 'embedded-ipv4';
  /** Byte offset of the IPv4 address an IPv6 range carries. */
  offset?: number;
}

function v4(cidr: string, kind: Range['kind']): Range {
  const [address = '', prefix = '32'] = cidr.split('/');
  return { bytes: parseIPv4(address), prefix: Number(prefix), kind };
}

function v6(cidr: string, kind: Range['kind'], offset?: number): Range {
  const [address = '', prefix = '128'] = cidr.split('/');
  const range: Range = { bytes: parseIPv6(address), prefix: Number(prefix), kind };
  if (offset !== undefined) {
    range.offset = offset;
  }
  return range;
}

/** First match wins, so single addresses come before the ranges that contain them. */
const IPV4_RANGES: Range[] = [
  v4('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OpenStack
  v4('100.100.100.200/32', 'metadata'), // Alibaba Cloud
  v4('192.0.0.192/32', 'metadata'), // Oracle Cloud
  v4('255.255.255.255/32', 'broadcast'),
  v4('0.0.0.0/8', 'unspecified'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'cgnat'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'),
  v4('192.0.2.0/24', 'reserved'),
  v4('192.88.99.0/24', 'reserved'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'reserved'),
  v4('198.51.100.0/24', 'reserved'),
  v4('203.0.113.0/24', 'reserved'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

const IPV6_RANGES: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('::ffff:0:0/96', 'embedded-ipv4', 12), // IPv4-mapped
  v6('64:ff9b::/96', 'embedded-ipv4', 12), // NAT64
  v6('2002::/16', 'embedded-ipv4', 2), // 6to4
  v6('64:ff9b:1::/48', 'private'),
  v6('::/96', 'reserved'), // deprecated IPv4-compatible
  v6('100::/64', 'reserved'),
  v6('2001:db8::/32', 'reserved'),
  v6('fd00:ec2::254/128', 'metadata'), // AWS over IPv6
  v6('fc00::/7', 'private'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'private'), // deprecated site-local
  v6('ff00::/8', 'multicast'),
];

function parseIPv4(address: string): number[] {
  return address.split('.').map(Number);
}

/** Sixteen bytes of a valid IPv6 address, including `::` and a trailing dotted quad. */
function parseIPv6(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    tail.push(...parseIPv4(text.slice(lastColon + 1)));
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = '', rest] = text.split('::');
  const groups = (part: string | undefined) =>
    part ? part.split(':').map((g) => Number.parseInt(g, 16)) : [];
  const left = groups(head);
  const right = groups(rest);
  const middle = rest === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  const words = [...left, ...middle, ...right];
  const bytes = words.flatMap((word) => [word >> 8, word & 0xff]);
  if (tail.length === 4) {
    bytes.splice(12, 4, ...tail);
  }
  return bytes;
}

function matches(bytes: number[], range: Range): boolean {
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((range.bytes[i] ?? 0) & mask)) {
      return false;
    }
  }
  return true;
}

function classifyBytes(bytes: number[], ranges: Range[]): AddressClass {
  for (const range of ranges) {
    if (!matches(bytes, range)) {
      continue;
    }
    if (range.kind === 'embedded-ipv4') {
      const offset = range.offset ?? 12;
      return classifyBytes(bytes.slice(offset, offset + 4), IPV4_RANGES);
    }
    return range.kind;
  }
  return 'public';
}

/**
 * Classifies an IP address (IPv4 dotted quad or IPv6, with or without brackets or a zone id).
 * IPv4 carried inside IPv6 (mapped, NAT64, 6to4) is classified by the IPv4 address it reaches.
 * Returns `undefined` for anything that is not an IP address.
 */
export function classifyAddress(address: string): AddressClass | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) {
    return classifyBytes(parseIPv4(bare), IPV4_RANGES);
  }
  if (isIPv6(bare)) {
    return classifyBytes(parseIPv6(bare), IPV6_RANGES);
  }
  return undefined;
}
