// The address of the client behind a request: the socket's peer, unless that peer is a trusted
// proxy, in which case X-Forwarded-For is read from the right (each trusted hop appends the
// address it saw) until the first address that is not a trusted proxy. Entries to the left of
// that are whatever the client wrote and are never believed.
import net from 'node:net';
import type { IncomingMessage } from 'node:http';

export type ClientIpResolver = (req: IncomingMessage) => string;

/** `::ffff:1.2.3.4` is the IPv4 client 1.2.3.4 on a dual-stack socket. */
export function normalizeIp(address: string): string {
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  return mapped ? mapped[1] : lower;
}

/** An IP or CIDR entry such as `10.0.0.0/8`, `192.168.1.7` or `fd00::/8`; undefined when invalid. */
export function parseProxyEntry(entry: string): { address: string; prefix?: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address, prefixText, extra] = entry.trim().split('/');
  if (extra !== undefined) return undefined;
  const version = net.isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { address, family };
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family };
}

/** Strips the forms a proxy may write around an address: `[v6]:port`, `v4:port`, quotes. */
function cleanForwarded(entry: string): string | undefined {
  let value = entry.trim().replace(/^"(.*)"$/, '$1');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) value = bracketed[1];
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
  return net.isIP(value) ? normalizeIp(value) : undefined;
}

export function createClientIpResolver(trustedProxies: readonly string[]): ClientIpResolver {
  const trusted = new net.BlockList();
  for (const entry of trustedProxies) {
    const parsed = parseProxyEntry(entry);
    if (!parsed) throw new Error(`invalid trusted proxy "${entry}"`);
    if (parsed.prefix === undefined) trusted.addAddress(parsed.address, parsed.family);
    else trusted.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  const isTrusted = (ip: string) => trusted.check(ip, net.isIPv4(ip) ? 'ipv4' : 'ipv6');

  return (req) => {
    // The socket is gone (null) once a client that was cut off mid-body has closed the connection.
    const peer = normalizeIp(req.socket?.remoteAddress ?? '');
    if (trustedProxies.length === 0 || !peer || !isTrusted(peer)) return peer || 'unknown';
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    let client = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = cleanForwarded(hops[i]);
      // A malformed entry was written by someone we do not trust: stop at the last good hop.
      if (!hop) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    return client;
  };
}

/**
 * The key a client's requests are counted under. IPv6 clients are counted per /64, the
 * smallest block a site is normally given, so that one host cannot mint fresh addresses to
 * reset its quota.
 */
export function rateLimitKey(ip: string): string {
  if (!net.isIPv6(ip)) return ip;
  const groups = expandIpv6(ip);
  return groups ? `${groups.slice(0, 4).join(':')}::/64` : ip;
}

function expandIpv6(ip: string): string[] | undefined {
  let text = ip.toLowerCase().split('%')[0];
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((g) => g.padStart(4, '0'));
}
