// The dashboard's own OAuth client at the platform's authorization server: a public client
// (no secret; PKCE S256 like every client) of the code flow with refresh tokens, written by every
// replica at start as the gateway's facade client is (edge/oauth/gateway-client.ts). It cannot be
// registered through /register: the redirect-URI policy refuses the platform's own origins there
// (edge/http/redirect-uri-policy.ts), and rightly so for third-party clients; this one is the
// platform's, and its callback is on `{web_url}`.
import { isDeepStrictEqual } from 'node:util';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import type { Logger } from '../../services/common/log.ts';
import type { RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import { clientRecord, collectionName, openClientRecord } from '../oauth/adapter.ts';

export const DASHBOARD_CLIENT_ID = 'mindgate-dashboard';

/** Where the dashboard lives on the web listener. */
export const DASHBOARD_PATH = '/app';

export interface DashboardUrls {
  /** `{web_url}/app/auth/callback`: the authorization server sends the code here. */
  callback: string;
  /** `{web_url}/app/signed-out`: where RP-initiated logout returns. */
  signedOut: string;
}

export function dashboardUrls(webUrl: string): DashboardUrls {
  return { callback: `${webUrl}${DASHBOARD_PATH}/auth/callback`, signedOut: `${webUrl}${DASHBOARD_PATH}/signed-out` };
}

interface ClientDoc extends RecordDoc {
  payload: string;
  clientId: string;
  consumed: number;
  sealedWith: string;
}

/** Creates or updates the dashboard's client so that it is exactly what the configuration describes. */
export async function registerDashboardClient(
  records: RecordStore,
  kek: KeyEncryption,
  urls: DashboardUrls,
  logger: Logger,
): Promise<'created' | 'updated' | 'unchanged'> {
  const clients = records.collection<ClientDoc>(collectionName('Client'));
  const payload = {
    client_id: DASHBOARD_CLIENT_ID,
    client_name: 'Mindgate dashboard',
    application_type: 'web',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [urls.callback],
    post_logout_redirect_uris: [urls.signedOut],
    token_endpoint_auth_method: 'none',
  };
  const existing = await clients.get(DASHBOARD_CLIENT_ID);
  const stored = existing && openClientRecord(kek, DASHBOARD_CLIENT_ID, existing.payload);
  if (stored?.current && isDeepStrictEqual(stored.payload, payload)) return 'unchanged';
  await clients.put({
    _id: DASHBOARD_CLIENT_ID,
    ...clientRecord(kek, DASHBOARD_CLIENT_ID, payload),
    clientId: DASHBOARD_CLIENT_ID,
    consumed: 0,
  });
  const outcome = existing ? 'updated' : 'created';
  logger.info(
    { clientId: DASHBOARD_CLIENT_ID, redirectUri: urls.callback, outcome },
    'registered the dashboard client at the authorization server',
  );
  return outcome;
}
