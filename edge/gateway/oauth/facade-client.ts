// Facade client ids. Registration stores nothing, so what the gateway must know later about a
// client travels in its client_id: the server's upstream client id alone, or, for a server
// authorized by the platform (the Brain) when the client registered a name, followed by that
// name signed for this server
// (`mindgate-gateway-brain.<kid>.<payload>.<mac>`). The name is carried through consent to the
// upstream authorization server, which puts it in the tokens (`client_name`), so that what a
// facade client writes to the Brain names the client, not the gateway.
import type { FacadeCrypto } from './tokens.ts';

interface ClientClaims {
  /** Server name. */
  s: string;
  /** The client_name the client registered. */
  n: string;
}

const MAX_NAME = 100;

export interface FacadeClient {
  /**
   * The upstream client id: what codes and refresh tokens are bound to. Every facade client of a
   * server shares it, and anyone may register any name, so binding to the signed form would
   * protect nothing more.
   */
  clientId: string;
  /** The registered client_name, when there was one. */
  name?: string;
}

/** The client_id registration hands out. */
export function issueFacadeClientId(crypto: FacadeCrypto, server: string, upstreamClientId: string, name: unknown): string {
  const clean = typeof name === 'string' ? name.trim().slice(0, MAX_NAME) : '';
  return clean ? `${upstreamClientId}.${crypto.sign('client', { s: server, n: clean } satisfies ClientClaims)}` : upstreamClientId;
}

/** The client a client_id names at this server, or undefined when it is not one of the facade's. */
export function facadeClient(crypto: FacadeCrypto, server: string, upstreamClientId: string, clientId: string): FacadeClient | undefined {
  if (clientId === upstreamClientId) return { clientId };
  if (!clientId.startsWith(`${upstreamClientId}.`)) return undefined;
  const claims = crypto.verify<ClientClaims>('client', clientId.slice(upstreamClientId.length + 1));
  if (!claims || claims.s !== server || typeof claims.n !== 'string') return undefined;
  return { clientId: upstreamClientId, name: claims.n };
}
