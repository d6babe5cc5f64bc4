// Where a webhook may be delivered. A URL that names a private, loopback or link-local address,
// or a host name that resolves to one, is refused unless the operator allows private targets:
// otherwise any user could make the server call its own network (SSRF: the cloud metadata
// service at 169.254.169.254, an admin port on 127.0.0.1, a database on 10.0.0.0/8). The check
// resolves the name and looks at every address it gives, not at the string, so a public name
// pointing inside is refused too. A name can change its answer after the check (DNS
// rebinding): the delivery has to run this check again and connect to the address it approved.
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Lookup = (hostname: string) => Promise<ResolvedAddress[]>;

export interface WebhookTargetOptions {
  /** The operator allows private and loopback targets (a receiver on the same network). */
  allowPrivate: boolean;
  /** Resolves a host name to every address (default: the system resolver, all families). */
  lookup?: Lookup;
}

export interface WebhookTarget {
  url: string;
  /** The addresses the host resolved to when it was checked. */
  addresses: ResolvedAddress[];
}

/** Addresses no webhook of a stranger may reach: RFC 6890's special-purpose ranges. */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated): ::7f00:1 is 127.0.0.1 written another way
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['64:ff9b::', 96], // NAT64, which can reach any IPv4 address
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** True for an address a webhook may not reach by default (IPv4-mapped IPv6 read as IPv4). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 0) return true; // not an address: refuse rather than guess
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Checks a webhook URL: http(s), no credentials in it, a host that resolves, and (unless
 * allowed) no private or loopback address among its answers. Throws WebhookTargetError with a
 * message that says what to fix.
 */
export async function checkWebhookTarget(
  raw: string,
  options: WebhookTargetOptions,
): Promise<WebhookTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError('url must be an absolute URL such as https://bot.example/hooks');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new WebhookTargetError('url must start with https:// or http://');
  }
  if (url.username || url.password) {
    throw new WebhookTargetError(
      'url may not hold credentials; verify deliveries by their signature',
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: ResolvedAddress[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await (options.lookup ?? systemLookup)(host);
    } catch {
      throw new WebhookTargetError(`url's host ${host} does not resolve`);
    }
    if (addresses.length === 0) throw new WebhookTargetError(`url's host ${host} does not resolve`);
  }
  if (!options.allowPrivate) {
    const inside = addresses.find((entry) => isPrivateAddress(entry.address));
    if (inside) {
      throw new WebhookTargetError(
        `url's host ${host} is a private or loopback address (${inside.address}); webhooks go to public addresses only on this server`,
      );
    }
  }
  return { url: url.toString(), addresses };
}
