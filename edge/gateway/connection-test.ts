// The credential of the Agents API's connection test (edge/api/mcp-server-test.ts), which calls a
// server through the gateway as its organization would: a ticket the API signs with a key derived
// from GATEWAY_STATE_SECRET (shared by every replica, so whichever replica serves the public URL
// can open it), naming the server and the organization, valid for 30 seconds. It stands in for the
// organization's own credential at the proxy (organization-access.ts) and is never forwarded. It
// carries no operator rights: the backend sees neither X-Gateway-Key nor X-Gateway-Authenticated.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export const CONNECTION_TEST_HEADER = 'x-mindgate-connection-test';
const TTL_MS = 30_000;

export interface ConnectionTickets {
  issue(server: string, organizationId: string): string;
  /** The organization a ticket names, when it is valid for `server`; undefined otherwise. */
  open(ticket: string, server: string): string | undefined;
}

export function createConnectionTickets(stateSecrets: string[], now: () => number = Date.now): ConnectionTickets {
  const keys = stateSecrets.map((s) => Buffer.from(hkdfSync('sha256', s, 'mindgate-gateway-connection-test', 'ticket', 32)));
  const mac = (key: Buffer, server: string, org: string, expires: string) =>
    createHmac('sha256', key).update(`${server}\n${org}\n${expires}`).digest();
  return {
    issue(server, organizationId) {
      const expires = String(now() + TTL_MS);
      return `${expires}.${organizationId}.${mac(keys[0], server, organizationId, expires).toString('base64url')}`;
    },
    open(ticket, server) {
      const [expires, org, given, ...rest] = ticket.split('.');
      if (rest.length > 0 || !/^\d{1,15}$/.test(expires ?? '') || !org || !given || Number(expires) < now()) return undefined;
      const signature = Buffer.from(given, 'base64url');
      const ok = keys.some((key) => {
        const expected = mac(key, server, org, expires);
        return expected.length === signature.length && timingSafeEqual(expected, signature);
      });
      return ok ? org : undefined;
    },
  };
}
