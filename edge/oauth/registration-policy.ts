// What dynamic registration (RFC 7591) accepts at `{auth_url}/register` (docs/identity.md,
// "Dynamic registration"): public clients using the code flow, whose redirect-type URIs pass the
// platform's one redirect-URI policy and whose informational and fetched URIs are plain https.
// Runs before oidc-provider's own checks, so every refusal here carries the RFC 7591 code:
// `invalid_redirect_uri` when a redirect URI is refused, `invalid_client_metadata` for anything
// else (malformed redirect_uris included).
import { errors } from 'oidc-provider';
import { checkHttpsUri, checkRedirectUri } from '../http/redirect-uri-policy.ts';

/** Client metadata holding one URI that users are shown or the server fetches. */
const HTTPS_URI_FIELDS = [
  'client_uri',
  'logo_uri',
  'policy_uri',
  'tos_uri',
  'jwks_uri',
  'initiate_login_uri',
  'sector_identifier_uri',
  'backchannel_logout_uri',
  'frontchannel_logout_uri',
  'backchannel_client_notification_endpoint',
];
/** Client metadata holding a list of such URIs. */
const HTTPS_URI_LIST_FIELDS = ['request_uris'];

/**
 * Checks and completes registered metadata. `body` is the registration request as sent: fields
 * this server ignores (request_uris, the logout channels while those features are off) are
 * checked too, so a bad value is refused rather than silently dropped.
 */
export function applyRegistrationPolicy(metadata: Record<string, unknown>, body: Record<string, unknown>, ownOrigins: string[]): void {
  // RFC 7591 defaults to client_secret_basic when the field is absent; registration here only
  // creates public clients, which the response states.
  metadata.token_endpoint_auth_method = 'none';
  delete metadata.client_secret;
  delete metadata.client_secret_expires_at;
  checkGrantTypes(metadata);
  const native = checkRedirectUris(metadata.redirect_uris);
  // Loopback redirects match on any port (RFC 8252 §7.3), which oidc-provider applies to native clients.
  if (native) metadata.application_type = 'native';
  if (metadata.post_logout_redirect_uris !== undefined) {
    stringList(metadata.post_logout_redirect_uris, 'post_logout_redirect_uris').forEach((uri, i) => {
      const check = checkRedirectUri(uri, ownOrigins);
      if (!check.ok) throw new errors.InvalidClientMetadata(`post_logout_redirect_uris[${i}]: ${check.reason}`);
    });
  }
  checkHttpsUris({ ...body, ...metadata });

  function checkRedirectUris(value: unknown): boolean {
    const uris = stringList(value, 'redirect_uris');
    if (uris.length === 0) throw new errors.InvalidClientMetadata('at least one redirect_uris member is required');
    let anyNative = false;
    uris.forEach((uri, i) => {
      const check = checkRedirectUri(uri, ownOrigins);
      // oidc-provider answers invalid_redirect_uri for a description that starts with redirect_uris.
      if (!check.ok) throw new errors.InvalidClientMetadata(`redirect_uris[${i}]: ${check.reason}`);
      if (check.kind !== 'https') anyNative = true;
    });
    return anyNative;
  }
}

function checkGrantTypes(metadata: Record<string, unknown>): void {
  const grantTypes = metadata.grant_types === undefined ? ['authorization_code'] : stringList(metadata.grant_types, 'grant_types');
  for (const g of grantTypes) {
    if (g !== 'authorization_code' && g !== 'refresh_token') {
      throw new errors.InvalidClientMetadata(`grant type ${g} is not available to dynamically registered clients`);
    }
  }
  // Some clients register only authorization_code and refresh anyway.
  metadata.grant_types = ['authorization_code', 'refresh_token'];
}

function checkHttpsUris(metadata: Record<string, unknown>): void {
  for (const field of HTTPS_URI_FIELDS) {
    if (metadata[field] === undefined) continue;
    const check = checkHttpsUri(metadata[field], field);
    if (!check.ok) throw new errors.InvalidClientMetadata(check.reason);
  }
  for (const field of HTTPS_URI_LIST_FIELDS) {
    if (metadata[field] === undefined) continue;
    stringList(metadata[field], field).forEach((uri, i) => {
      const check = checkHttpsUri(uri, `${field}[${i}]`);
      if (!check.ok) throw new errors.InvalidClientMetadata(check.reason);
    });
  }
}

/** An array of strings, or invalid_client_metadata naming the field. */
function stringList(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new errors.InvalidClientMetadata(`expected ${field} to be an array of strings`);
  }
  return value;
}
