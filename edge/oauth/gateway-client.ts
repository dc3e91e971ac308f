// The gateway's own confidential clients at this authorization server: one for each server whose
// OAuth facade fronts `{auth_url}` (the Brain's, `mindgate-gateway-brain`). Every replica
// registers them at start. The record follows from the configuration alone (the secret is
// derived from GATEWAY_STATE_SECRET), so replicas that share their configuration write the same
// record, and a start that finds it already there writes nothing.
import { isDeepStrictEqual } from 'node:util';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import type { Logger } from '../../services/common/log.ts';
import type { RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import { clientRecord, collectionName, openClientRecord } from './adapter.ts';

/** Every gateway client's id starts so (`mindgate-gateway-brain`); registration never assigns such ids. */
export const GATEWAY_CLIENT_PREFIX = 'mindgate-gateway-';

/** The authorization parameter in which the gateway's facade names the client it acts for. */
export const VIA_CLIENT_NAME_PARAM = 'mindgate_client_name';

export function isGatewayClient(clientId: string): boolean {
  return clientId.startsWith(GATEWAY_CLIENT_PREFIX);
}

export interface GatewayClientRegistration {
  clientId: string;
  clientName: string;
  /** The gateway's callback, `{base_url}/{server}/oauth/callback`. */
  redirectUri: string;
  secret: string;
  /** Secrets a replica may still present during a rotation: finding one of them stored is expected. */
  previousSecrets: string[];
}

/** The adapter's shape of a stored oidc-provider model (see adapter.ts). */
interface ClientDoc extends RecordDoc {
  payload: string;
  clientId: string;
  consumed: number;
  sealedWith: string;
}

export type GatewayClientOutcome = 'created' | 'updated' | 'unchanged';

/** Creates or updates each client so that it is exactly what the registration describes. */
export async function registerGatewayClients(
  records: RecordStore,
  kek: KeyEncryption,
  registrations: GatewayClientRegistration[],
  logger: Logger,
): Promise<Record<string, GatewayClientOutcome>> {
  const clients = records.collection<ClientDoc>(collectionName('Client'));
  const outcomes: Record<string, GatewayClientOutcome> = {};
  for (const r of registrations) {
    // oidc-provider's client metadata: a web client of the code flow with refresh tokens (PKCE
    // is required of every client), authenticated with HTTP Basic. No organization: the user
    // picks one at consent, per grant, as for any MCP client.
    const payload = {
      client_id: r.clientId,
      client_secret: r.secret,
      client_name: r.clientName,
      application_type: 'web',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [r.redirectUri],
      token_endpoint_auth_method: 'client_secret_basic',
    };
    const existing = await clients.get(r.clientId);
    const stored = existing && openClientRecord(kek, r.clientId, existing.payload);
    if (stored?.current && isDeepStrictEqual(stored.payload, payload)) {
      outcomes[r.clientId] = 'unchanged';
      continue;
    }
    if (stored) {
      const secret = stored.payload.client_secret;
      if (secret !== r.secret && !r.previousSecrets.includes(secret as string)) {
        // Another process registered a secret this one cannot derive: replicas that do not
        // share GATEWAY_STATE_SECRET take the client from each other at every start.
        logger.warn(
          { clientId: r.clientId },
          'the gateway client at the authorization server had a secret from another GATEWAY_STATE_SECRET; replicas must share GATEWAY_STATE_SECRET',
        );
      }
    }
    await clients.put({ _id: r.clientId, ...clientRecord(kek, r.clientId, payload), clientId: r.clientId, consumed: 0 });
    outcomes[r.clientId] = existing ? 'updated' : 'created';
    logger.info(
      { clientId: r.clientId, redirectUri: r.redirectUri, outcome: outcomes[r.clientId] },
      'registered the gateway client at the authorization server',
    );
  }
  return outcomes;
}
