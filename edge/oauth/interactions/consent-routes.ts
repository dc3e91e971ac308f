// Consent: the user picks (or creates) the organization the client acts for, and the grant is
// saved with it.
import { Code, ConnectError } from '@connectrpc/connect';
import type { RouteContext, Router } from '../../http/router.ts';
import { isGatewayClient, VIA_CLIENT_NAME_PARAM } from '../gateway-client.ts';
import { messagePage } from '../pages.ts';
import { readForm, refuseForm, send, type InteractionDetails, type InteractionKit } from './kit.ts';
import { createOrganization } from './onboarding.ts';
import { renderConsent } from './views.ts';

export function registerConsentRoutes(router: Router, kit: InteractionKit): void {
  router.post('/interaction/:uid/consent', async (c) => {
    const d = await kit.details(c);
    if (!d) return;
    const form = await readForm(c.req);
    if (!kit.checkCsrf(d.uid, form)) return refuseForm(c.res);
    if (d.prompt.name !== 'consent' || !d.session?.accountId) {
      return send(c.res, 400, messagePage('Request refused', 'Sign in first.', 'error'));
    }
    const organizationId = await chosenOrganization(kit, c, d, form);
    if (!organizationId) return;
    const grantId = await saveGrant(kit, d, organizationId);
    await kit.provider.interactionFinished(c.req, c.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });
}

/** The organization picked (or named, then created) on the form, once membership is checked; else the page is answered. */
async function chosenOrganization(
  kit: InteractionKit,
  c: RouteContext,
  d: InteractionDetails,
  form: URLSearchParams,
): Promise<string | undefined> {
  const accountId = d.session!.accountId;
  let organizationId = (form.get('organization') ?? '').trim();
  const newName = (form.get('new_organization') ?? '').trim();
  if (!organizationId && newName) {
    if (newName.length > 200) {
      await renderConsent(kit, c, d, { status: 400, error: 'Enter an organization name of at most 200 characters.' });
      return undefined;
    }
    const owner = await kit.accounts.get(accountId);
    if (!owner) throw new ConnectError('the signed-in account no longer exists', Code.NotFound);
    organizationId = await createOrganization(kit, c, { name: newName, owner, source: 'consent' });
  }
  try {
    if (!organizationId) throw new ConnectError('no organization', Code.NotFound);
    await kit.app.clients.organizations.getMembership({ organizationId, userId: accountId });
  } catch (err) {
    if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) {
      await renderConsent(kit, c, d, { status: 403, error: 'Pick one of your organizations.' });
      return undefined;
    }
    throw err;
  }
  return organizationId;
}

/** Grants what the prompt was missing and records which organization the grant acts for. */
async function saveGrant(kit: InteractionKit, d: InteractionDetails, organizationId: string): Promise<string> {
  const accountId = d.session!.accountId;
  const clientId = String(d.params.client_id);
  const grant = new kit.provider.Grant({ accountId, clientId });
  const missing = d.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  const granted = new Set<string>();
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
    granted.add(indicator);
  }
  const grantId = await grant.save();
  // The gateway's facade client acts for another client, which it names: tokens show that name.
  const via = d.params[VIA_CLIENT_NAME_PARAM];
  await kit.server.recordGrant({
    _id: grantId,
    organizationId,
    clientId,
    accountId,
    scope: String(d.params.scope ?? ''),
    resources: [...granted],
    ...(isGatewayClient(clientId) && typeof via === 'string' && via.trim() ? { viaClientName: via.trim().slice(0, 200) } : {}),
  });
  return grantId;
}
