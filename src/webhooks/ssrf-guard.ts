import { promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, isIPv4, isIPv6, type LookupFunction } from 'node:net';
import { BaseError } from '../domain/errors.ts';

// Webhook URLs are chosen by merchants, so the sender must not become a way into the operator's own
// network (SSRF). A destination is refused when its host, or any address its name resolves to, is in
// a non-public range (IANA special-purpose registries, IPv4 and IPv6). The check runs in the socket's
// own DNS lookup and again on the address actually connected to, so a name that resolves to a public
// address for the check and to a private one for the connection (DNS rebinding) has no gap to use.

export class SsrfError extends BaseError {
  override readonly name = 'SsrfError';
  readonly code = 'ERR_WEBHOOK_ADDRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
    how: 'resolves to' | 'connected to' = 'resolves to',
  ) {
    const article = /^[aeiouAEIOU]/.test(range) ? 'an' : 'a';
    const what = host === address ? `${address} is ${article} ${range} address` : `${host} ${how} ${address}, ${article} ${range} address`;
    super(`refused: ${what}; webhooks are only sent to public addresses (webhooks.allowPrivateNetworks: true allows it in development)`);
  }
}

const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, '"this network" (reserved)'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved (IETF protocol assignments)'],
  ['192.0.2.0', 24, 'reserved (documentation)'],
  ['192.88.99.0', 24, 'reserved (6to4 relay)'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'reserved (documentation)'],
  ['203.0.113.0', 24, 'reserved (documentation)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

const V4_TABLE = V4_RANGES.map(([base, prefix, label]) => {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { net: (v4ToInt(base) & mask) >>> 0, mask, label };
});

function classifyV4Int(value: number): string | null {
  for (const r of V4_TABLE) if (((value & r.mask) >>> 0) === r.net) return r.label;
  return null;
}

/** Eight 16-bit groups of an IPv6 address (zone id dropped, embedded dotted quad folded); null if not IPv6. */
export function parseIPv6(input: string): number[] | null {
  let ip = input;
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  if (!isIPv6(ip)) return null;
  const lastColon = ip.lastIndexOf(':');
  const tail = ip.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v = v4ToInt(tail);
    ip = `${ip.slice(0, lastColon + 1)}${Math.floor(v / 65536).toString(16)}:${(v % 65536).toString(16)}`;
  }
  const halves = ip.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  let groups: string[];
  if (halves.length === 2) {
    const rest = halves[1] ? halves[1].split(':') : [];
    groups = [...head, ...Array<string>(8 - head.length - rest.length).fill('0'), ...rest];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return null;
  return groups.map((g) => parseInt(g, 16));
}

function classifyV6(g: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const embedded = (hi: number, lo: number) => hi * 65536 + lo;
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8)) return 'unspecified';
  if (zeroTo(7) && g7 === 1) return 'loopback';
  if (zeroTo(5) && g5 === 0xffff) {
    const inner = classifyV4Int(embedded(g6, g7));
    return inner ? `IPv4-mapped ${inner}` : null;
  }
  if (zeroTo(6)) return 'reserved (IPv4-compatible)';
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    const inner = classifyV4Int(embedded(g6, g7));
    return inner ? `NAT64-embedded ${inner}` : null;
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return 'reserved (local-use NAT64)';
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved (discard-only)';
  if ((g0 & 0xfe00) === 0xfc00) return 'private (unique local)';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'reserved (site-local)';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 < 0x200) return 'reserved (IETF protocol assignments, Teredo)';
  if (g0 === 0x2001 && g1 === 0xdb8) return 'reserved (documentation)';
  if (g0 === 0x3fff && g1 < 0x1000) return 'reserved (documentation)';
  if (g0 === 0x2002) {
    const inner = classifyV4Int(embedded(g1, g2));
    return inner ? `6to4-embedded ${inner}` : null;
  }
  if (g0 === 0x5f00) return 'reserved (SRv6)';
  if ((g0 & 0xe000) !== 0x2000) return 'reserved (outside global unicast 2000::/3)';
  return null;
}

/**
 * The refused range an IP address falls in ("loopback", "private", "IPv4-mapped private", …), or
 * null for a public unicast address. Anything that does not parse as an IP is refused too.
 */
export function classifyAddress(address: string): string | null {
  const ip = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(ip)) return classifyV4Int(v4ToInt(ip));
  const groups = parseIPv6(ip);
  if (groups) return classifyV6(groups);
  return 'unparseable';
}

/** URL host without IPv6 brackets or a trailing dot, lowercase. */
export function normalizeHost(host: string): string {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  return h;
}

/** RFC 6761: localhost and *.localhost always mean the loopback interface. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The refusal for a host that needs no DNS to judge (an IP literal or a localhost name), else null. */
export function refuseLiteralHost(hostname: string): SsrfError | null {
  const host = normalizeHost(hostname);
  if (isIP(host)) {
    const range = classifyAddress(host);
    return range ? new SsrfError(host, host, range) : null;
  }
  if (isLocalhostName(host)) return new SsrfError(host, host === 'localhost' ? '127.0.0.1' : host, 'loopback');
  return null;
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsPromises.lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves a host and refuses it when it is, or any of its addresses is, non-public. Refusing on
 * any bad address (not just skipping it) keeps a mixed answer from reaching the private one later.
 */
export async function resolveAllowed(hostname: string, resolver: Resolver = systemResolver): Promise<LookupAddress[]> {
  const host = normalizeHost(hostname);
  const refused = refuseLiteralHost(host);
  if (refused) throw refused;
  if (isIP(host)) return [{ address: host, family: isIP(host) }];
  const addresses = await resolver(host);
  if (addresses.length === 0) throw Object.assign(new Error(`${host} has no addresses`), { code: 'ENOTFOUND' });
  for (const a of addresses) {
    const range = classifyAddress(a.address);
    if (range) throw new SsrfError(host, a.address, range);
  }
  return addresses;
}

/** A `lookup` for net/http/https sockets that only ever hands out vetted addresses. */
export function guardedLookup(resolver: Resolver = systemResolver): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolveAllowed(hostname, resolver).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        const first = usable[0];
        if (!first) {
          callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' }), '', 0);
        } else if (options.all) {
          callback(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** The check on the connected socket: the last word, whatever resolved the name. */
export function assertConnectedAddressAllowed(host: string, remoteAddress: string | undefined): void {
  if (!remoteAddress) throw new SsrfError(host, 'an unknown address', 'unverifiable', 'connected to');
  const range = classifyAddress(remoteAddress);
  if (range) throw new SsrfError(host, remoteAddress, range, 'connected to');
}
