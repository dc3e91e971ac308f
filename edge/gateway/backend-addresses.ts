// Which addresses an organization's MCP server may point the gateway at. An organization that
// registers a server makes the gateway send requests (and the facade, token requests) wherever its
// URLs lead, from inside the platform's network: loopback, private, link-local and cloud-metadata
// addresses would open the platform's own services to it. Unless the operator allows them
// (GATEWAY_ALLOW_PRIVATE_BACKENDS), such addresses are refused when a server is saved (its host
// names are resolved then) and again at each connection to its backend (the lookup below), so a
// name that resolves elsewhere later (DNS rebinding) does not reach them either. Servers of the
// servers file and the operator's shared servers are the operator's own and are not limited.
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
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv6');
}

/** True for loopback, private, link-local, shared, multicast and reserved addresses (IPv4-mapped too). */
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

/**
 * A net.connect lookup that drops private addresses: connecting to a name that resolves only to
 * such addresses fails (EADDRNOTAVAIL), which the proxy answers as an unreachable backend.
 */
export const publicOnlyLookup: net.LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return (callback as (e: Error) => void)(err);
    const allowed = (addresses as dns.LookupAddress[]).filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0) {
      const refused = Object.assign(new Error(`${hostname} resolves only to private addresses`), { code: 'EADDRNOTAVAIL' });
      return (callback as (e: Error) => void)(refused);
    }
    if ((options as dns.LookupOptions).all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0].address, allowed[0].family);
  });
};
