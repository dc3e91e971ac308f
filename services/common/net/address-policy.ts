// Which addresses the platform may send requests to on a customer's behalf: the one policy for
// every URL an organization registers (a webhook endpoint, an MCP server the gateway proxies to,
// edge/gateway/registry.ts). Such a URL makes the platform connect wherever it leads, from inside the
// platform's network: loopback, private, link-local (cloud metadata at 169.254.169.254), shared
// and reserved addresses would open the platform's own services to it. Unless the operator allows
// them, such addresses are refused when the URL is saved (its host name resolved then) and again
// at every connection (`guardedLookup`): the connection goes to the address that was checked, so
// a name that resolves elsewhere later (DNS rebinding) does not reach them either.
import dns from 'node:dns';
import net from 'node:net';

const BLOCKED = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv6');
}

/** True for loopback, private, link-local, shared, documentation, multicast and reserved addresses (IPv4-mapped too). */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return BLOCKED.check(mapped[1], 'ipv4');
  const family = net.isIP(address);
  if (family === 0) return false;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host of a URL as net.connect takes it (IPv6 literals without brackets). */
export function hostOf(url: string): string {
  const host = new URL(url).hostname;
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

/** Every address `host` stands for (itself when it is an IP literal). */
export async function addressesOf(host: string): Promise<string[]> {
  if (net.isIP(host)) return [host];
  const found = await dns.promises.lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
}

/** Why a URL's host may not be used, or undefined when it may. Resolves the name. */
export async function refusedAddress(url: string, allowPrivate: boolean): Promise<string | undefined> {
  const host = hostOf(url);
  let addresses: string[];
  try {
    addresses = await addressesOf(host);
  } catch {
    return `${host} does not resolve`;
  }
  if (allowPrivate) return undefined;
  const blocked = addresses.find(isPrivateAddress);
  return blocked ? `${host} resolves to ${blocked}, a loopback, private, link-local or reserved address` : undefined;
}

/** A connection refused by the policy, with the code net.connect would give an unusable address. */
export class RefusedAddressError extends Error {
  readonly code = 'EADDRNOTAVAIL';
}

/**
 * A net.connect `lookup` that keeps only the addresses the policy allows, so the connection goes
 * to one of them (the address is pinned for the connection's life). A name with none left fails
 * with RefusedAddressError. IP literals never reach a lookup: check them with `refusedAddress`.
 */
export function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, found) => {
      if (err) return (callback as (e: Error) => void)(err);
      const allowed = (found as dns.LookupAddress[]).filter((a) => allowPrivate || !isPrivateAddress(a.address));
      if (allowed.length === 0) {
        return (callback as (e: Error) => void)(
          new RefusedAddressError(`${hostname} resolves only to loopback, private or reserved addresses`),
        );
      }
      if ((options as dns.LookupOptions).all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0].address, allowed[0].family);
    });
  };
}
