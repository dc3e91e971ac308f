// Server-rendered pages of the authorization server: plain HTML forms that work without
// JavaScript, with labels, an error summary announced to assistive technology, and no external
// resources.
import { escapeHtml } from '../http/escape-html.ts';
import { pageSecurityHeaders } from '../http/page-headers.ts';

const STYLE = `
*{box-sizing:border-box}body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f4f5f7;color:#1b1f24}
main{max-width:28rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.5rem;margin:0 0 1rem}label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=email],input[type=password],input[type=text],select{width:100%;padding:.6rem;font-size:1rem;border:1px solid #8a9099;border-radius:4px}
input:focus,select:focus,button:focus,a:focus{outline:3px solid #2962ff;outline-offset:2px}
button{margin-top:1.25rem;width:100%;padding:.7rem;font-size:1rem;font-weight:600;border:0;border-radius:4px;background:#1f4fd1;color:#fff;cursor:pointer}
button.secondary{background:#e6e8eb;color:#1b1f24}.hint{color:#4a5059;font-size:.9rem;margin:.25rem 0 0}
.error{border:2px solid #b00020;background:#fdecee;padding:.75rem;border-radius:4px;margin-bottom:1rem}
.notice{border:2px solid #1f7a3a;background:#eaf6ee;padding:.75rem;border-radius:4px;margin-bottom:1rem}
ul.scopes{padding-left:1.25rem}.or{text-align:center;color:#4a5059;margin:1.25rem 0 0}dl{margin:0}dt{font-weight:600}dd{margin:0 0 .5rem}
`;

// Consent, sign-in and logout forms post here, then redirect to the client or an identity provider.
const FORM_ACTION = "'self' http: https:";

/**
 * Security headers of a page whose form may end in a redirect to `returnTo` (the client's
 * redirect URI, or the post-logout one). Browsers apply form-action to every redirect after the
 * post, so a native app's private-use scheme (RFC 8252 §7.1, `com.example.app:`) must be named,
 * or the sign-in never reaches the app. The URI was checked against the client's registration,
 * and only its scheme's characters reach the policy.
 */
export function pageSecurityHeadersFor(returnTo?: unknown): Record<string, string> {
  return pageSecurityHeaders({ style: "'unsafe-inline'", img: "'self' data:", formAction: formActionFor(returnTo) });
}

/** The form-action sources of a page whose form may end in a redirect to `returnTo`. */
export function formActionFor(returnTo?: unknown): string {
  const scheme = typeof returnTo === 'string' ? /^([a-z][a-z0-9+.-]*):/i.exec(returnTo)?.[1]?.toLowerCase() : undefined;
  return scheme && scheme !== 'http' && scheme !== 'https' ? `${FORM_ACTION} ${scheme}:` : FORM_ACTION;
}

/** Security headers of every page the authorization server renders, its own and oidc-provider's. */
export const PAGE_SECURITY_HEADERS = pageSecurityHeadersFor();

export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  ...PAGE_SECURITY_HEADERS,
};

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Mindgate</title><style>${STYLE}</style></head>
<body><main>
${body}
</main></body>
</html>`;
}

export function errorBox(message?: string): string {
  return message ? `<div class="error" role="alert" id="form-error"><p>${escapeHtml(message)}</p></div>` : '';
}

export function noticeBox(message?: string): string {
  return message ? `<div class="notice" role="status"><p>${escapeHtml(message)}</p></div>` : '';
}

export interface SignInPageOptions {
  action: string;
  signUpHref: string;
  csrf: string;
  email?: string;
  error?: string;
  notice?: string;
  clientName?: string;
  social?: { href: string; name: string };
}

export function signInPage(o: SignInPageOptions): string {
  const described = o.error ? ' aria-describedby="form-error" aria-invalid="true"' : '';
  return layout(
    'Sign in',
    `<h1>Sign in${o.clientName ? ` to continue to ${escapeHtml(o.clientName)}` : ''}</h1>
${errorBox(o.error)}${noticeBox(o.notice)}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(o.email ?? '')}"${described}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${described}>
<button type="submit">Sign in</button>
</form>
${o.social ? `<p class="or">or</p><form method="get" action="${escapeHtml(o.social.href)}"><button type="submit" class="secondary">Continue with ${escapeHtml(o.social.name)}</button></form>` : ''}
<p>New here? <a href="${escapeHtml(o.signUpHref)}">Create an account</a></p>`,
  );
}

export interface SignUpPageOptions {
  action: string;
  signInHref: string;
  csrf: string;
  values?: { email?: string; name?: string; organization?: string };
  error?: string;
  errorField?: string;
  minPasswordLength: number;
  social?: { href: string; name: string };
}

export function signUpPage(o: SignUpPageOptions): string {
  const v = o.values ?? {};
  const invalid = (field: string) => (o.errorField === field ? ' aria-invalid="true" aria-describedby="form-error"' : '');
  return layout(
    'Create your account',
    `<h1>Create your account</h1>
${errorBox(o.error)}
<form method="post" action="${escapeHtml(o.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<label for="name">Your name</label>
<input id="name" name="name" type="text" autocomplete="name" value="${escapeHtml(v.name ?? '')}"${invalid('name')}>
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(v.email ?? '')}"${invalid('email')}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${o.minPasswordLength}" aria-describedby="password-hint"${invalid('password')}>
<p class="hint" id="password-hint">At least ${o.minPasswordLength} characters.</p>
<label for="organization">Organization name</label>
<input id="organization" name="organization" type="text" autocomplete="organization" required value="${escapeHtml(v.organization ?? '')}"${invalid('organization')}>
<p class="hint">Your organization gets its own brain. You can join or create others later.</p>
<button type="submit">Create account</button>
</form>
${o.social ? `<p class="or">or</p><form method="get" action="${escapeHtml(o.social.href)}"><button type="submit" class="secondary">Continue with ${escapeHtml(o.social.name)}</button></form>` : ''}
<p>Already have an account? <a href="${escapeHtml(o.signInHref)}">Sign in</a></p>`,
  );
}

export interface ConsentPageOptions {
  action: string;
  abortAction: string;
  csrf: string;
  clientName: string;
  clientId: string;
  redirectHost: string;
  userEmail: string;
  scopes: string[];
  resources: string[];
  organizations: { id: string; name: string }[];
  notice?: string;
  error?: string;
}

const SCOPE_TEXT: Record<string, string> = {
  openid: 'Confirm who you are',
  profile: 'See your name',
  email: 'See your e-mail address',
  offline_access: 'Stay connected when you are away (refresh tokens)',
};

export function consentPage(o: ConsentPageOptions): string {
  const scopes = o.scopes.map((s) => `<li>${escapeHtml(SCOPE_TEXT[s] ?? s)}</li>`).join('');
  const resources = o.resources.map((r) => `<li><code>${escapeHtml(r)}</code></li>`).join('');
  const options = o.organizations
    .map((org, i) => `<option value="${escapeHtml(org.id)}"${i === 0 ? ' selected' : ''}>${escapeHtml(org.name)}</option>`)
    .join('');
  return layout(
    'Authorize access',
    `<h1>Allow ${escapeHtml(o.clientName)} to act for your organization?</h1>
${errorBox(o.error)}${noticeBox(o.notice)}
<dl><dt>Application</dt><dd>${escapeHtml(o.clientName)} <span class="hint">(${escapeHtml(o.clientId)})</span></dd>
<dt>Will return to</dt><dd>${escapeHtml(o.redirectHost)}</dd>
<dt>Signed in as</dt><dd>${escapeHtml(o.userEmail)}</dd></dl>
${scopes ? `<p>It asks to:</p><ul class="scopes">${scopes}</ul>` : ''}
${resources ? `<p>Access to:</p><ul class="scopes">${resources}</ul>` : ''}
<form method="post" action="${escapeHtml(o.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
${
  o.organizations.length > 0
    ? `<label for="organization">Organization it acts for</label>
<select id="organization" name="organization" required>${options}</select>`
    : `<label for="new_organization">Name your organization</label>
<input id="new_organization" name="new_organization" type="text" autocomplete="organization" required>
<p class="hint">You belong to no organization yet; this creates one, with its brain.</p>`
}
<button type="submit" name="decision" value="allow">Allow</button>
</form>
<form method="post" action="${escapeHtml(o.abortAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(o.csrf)}">
<button type="submit" class="secondary">Deny</button>
</form>`,
  );
}

export function messagePage(title: string, message: string, status: 'error' | 'notice' = 'notice'): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>${status === 'error' ? errorBox(message) : noticeBox(message)}`);
}

/** RP-initiated logout: `form` is oidc-provider's hidden form (id op.logoutForm) carrying its xsrf token. */
export function logoutPage(form: string, clientName?: string): string {
  return layout(
    'Sign out',
    `<h1>Sign out of Mindgate?</h1>
${clientName ? `<p>${escapeHtml(clientName)} asks to sign you out.</p>` : ''}
${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm" class="secondary">No, stay signed in</button>`,
  );
}

export function logoutSuccessPage(clientName?: string): string {
  return messagePage('Signed out', clientName ? `You are signed out of Mindgate and ${clientName}.` : 'You are signed out of Mindgate.');
}
