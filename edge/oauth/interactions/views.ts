// The sign-in, sign-up and consent pages of an interaction, filled from its state.
import type { RouteContext } from '../../http/router.ts';
import { MIN_PASSWORD_LENGTH } from '../accounts.ts';
import { consentPage, pageSecurityHeadersFor, signInPage, signUpPage } from '../pages.ts';
import { send, type InteractionDetails, type InteractionKit } from './kit.ts';
import { signUpInput, verificationNotice, type VerificationMail } from './onboarding.ts';

export interface SignInExtra {
  status?: number;
  error?: string;
  email?: string;
  notice?: string;
  headers?: Record<string, string>;
}

export async function renderSignIn(kit: InteractionKit, c: RouteContext, d: InteractionDetails, extra: SignInExtra = {}) {
  const { uid } = d;
  send(
    c.res,
    extra.status ?? 200,
    signInPage({
      action: `/interaction/${uid}/sign-in`,
      signUpHref: `/interaction/${uid}/sign-up`,
      csrf: kit.csrfFor(uid),
      email: extra.email,
      error: extra.error,
      notice: extra.notice,
      clientName: await kit.clientName(String(d.params.client_id)),
      social: kit.socialLink(uid),
    }),
    { ...pageSecurityHeadersFor(d.params.redirect_uri), ...extra.headers },
  );
}

export interface SignUpView {
  action: string;
  signInHref: string;
  csrf: string;
  status?: number;
  error?: string;
  field?: string;
  form?: URLSearchParams;
  uid?: string;
  /** Where the interaction ends (its redirect URI), for the page's form-action. */
  returnTo?: unknown;
}

export function renderSignUp(kit: InteractionKit, c: RouteContext, view: SignUpView): void {
  const v = view.form ? signUpInput(view.form) : undefined;
  send(
    c.res,
    view.status ?? 200,
    signUpPage({
      action: view.action,
      signInHref: view.signInHref,
      csrf: view.csrf,
      values: v ? { email: v.email, name: v.name, organization: v.organization } : undefined,
      error: view.error,
      errorField: view.field,
      minPasswordLength: MIN_PASSWORD_LENGTH,
      social: view.uid ? kit.socialLink(view.uid) : undefined,
    }),
    pageSecurityHeadersFor(view.returnTo),
  );
}

async function organizationsOf(kit: InteractionKit, userId: string) {
  const list = await kit.app.clients.organizations.listOrganizations({ userId });
  return list.organizations.map((o) => ({ id: o.organization!.organizationId, name: o.organization!.name }));
}

/** `scheme://host` of the redirect URI, as the consent page names where the user returns. */
function redirectTarget(redirectUri: string): string {
  try {
    const u = new URL(redirectUri);
    return u.host ? `${u.protocol}//${u.host}` : `${u.protocol}`;
  } catch {
    return redirectUri;
  }
}

/** Right after sign-up, how the verification e-mail went; later, a reminder. */
function unverifiedNotice(d: InteractionDetails, email: string): string {
  const mail = (d.lastSubmission as { verificationMail?: VerificationMail } | undefined)?.verificationMail;
  return mail ? verificationNotice(email, mail) : `Your address ${email} is not verified yet: open the link we e-mailed you.`;
}

export async function renderConsent(
  kit: InteractionKit,
  c: RouteContext,
  d: InteractionDetails,
  extra: { status?: number; error?: string } = {},
) {
  const accountId = d.session!.accountId;
  const user = await kit.accounts.get(accountId);
  const clientId = String(d.params.client_id);
  const resource = d.params.resource;
  send(
    c.res,
    extra.status ?? 200,
    consentPage({
      action: `/interaction/${d.uid}/consent`,
      abortAction: `/interaction/${d.uid}/abort`,
      csrf: kit.csrfFor(d.uid),
      clientName: await kit.clientName(clientId),
      clientId,
      redirectHost: redirectTarget(String(d.params.redirect_uri ?? '')),
      userEmail: user?.email ?? accountId,
      scopes: String(d.params.scope ?? '')
        .split(' ')
        .filter(Boolean),
      resources: (Array.isArray(resource) ? resource : resource ? [resource] : [kit.server.resources.api]).map(String),
      organizations: await organizationsOf(kit, accountId),
      error: extra.error,
      notice: user && !user.emailVerified ? unverifiedNotice(d, user.email) : undefined,
    }),
    pageSecurityHeadersFor(d.params.redirect_uri),
  );
}
