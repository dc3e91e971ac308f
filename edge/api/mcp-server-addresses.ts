// The addresses an organization's MCP server may name, checked when it is saved
// (services/common/net/address-policy.ts says why): every URL of its settings must resolve, and only
// to public addresses, unless the operator allows private ones (GATEWAY_ALLOW_PRIVATE_BACKENDS).
import type { GatewayConfig } from '../gateway/config.ts';
import { addressesOf, hostOf, isPrivateAddress } from '../../services/common/net/address-policy.ts';
import { RequestValidationError, type ValidationErrorItem } from '../http/validation.ts';
import type { CreateMcpServerBody } from './mcp-server-schemas.ts';

function urlsOf(body: CreateMcpServerBody): [string[], string][] {
  const urls: [string[], string][] = [[['body', 'url'], body.url]];
  for (const field of ['issuer', 'authorization_endpoint', 'token_endpoint'] as const) {
    const value = body.oauth?.[field];
    if (value) urls.push([['body', 'oauth', field], value]);
  }
  if (body.authorization_server && body.authorization_server !== 'platform') {
    urls.push([['body', 'authorization_server'], body.authorization_server]);
  }
  return urls;
}

export async function checkBackendAddresses(config: Pick<GatewayConfig, 'allowPrivateBackends'>, body: CreateMcpServerBody): Promise<void> {
  if (config.allowPrivateBackends) return;
  const problems: ValidationErrorItem[] = [];
  for (const [loc, url] of urlsOf(body)) {
    const host = hostOf(url);
    let addresses: string[];
    try {
      addresses = await addressesOf(host);
    } catch {
      problems.push({ type: 'value_error', loc, msg: `${host} does not resolve` });
      continue;
    }
    const blocked = addresses.find(isPrivateAddress);
    if (blocked) {
      problems.push({
        type: 'value_error',
        loc,
        msg: `${host} resolves to ${blocked}, a private address; the operator allows those with GATEWAY_ALLOW_PRIVATE_BACKENDS`,
      });
    }
  }
  if (problems.length > 0) throw new RequestValidationError(problems);
}
