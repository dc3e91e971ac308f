// What oidc-provider's own responses carry beyond its defaults, added as Koa middleware in front
// of all of its routes: CORS on dynamic registration (browser clients such as the MCP Inspector
// register from another origin, and oidc-provider leaves that endpoint without CORS), and the
// platform's page security headers on every page it renders (errors, the logout confirmation
// and success pages, form_post responses).
import type Provider from 'oidc-provider';
import cors from 'oidc-provider/lib/shared/cors.js';
import { formActionFor, PAGE_SECURITY_HEADERS } from './pages.ts';

/** Preflights cached for an hour, POST only, any origin: the policy of the token endpoint. */
const registrationCors = cors({ allowMethods: 'POST', maxAge: 3600 });

export function addProviderEdges(provider: Provider, registrationPath: string): void {
  provider.use(async (ctx, next) => {
    if (ctx.path === registrationPath && (ctx.method === 'POST' || ctx.method === 'OPTIONS')) {
      return registrationCors(ctx, next);
    }
    return next();
  });
  provider.use(async (ctx, next) => {
    // Set before rendering, so that a form_post response adds the hash of its inline script to
    // script-src (oidc-provider does so when a script-src is present).
    ctx.set(PAGE_SECURITY_HEADERS);
    await next();
    let csp = ctx.response.get('content-security-policy');
    // 'none' beside a hash is ignored by browsers, but say what is meant.
    if (csp.includes("'sha256-")) csp = csp.replace("script-src 'none' ", 'script-src ');
    // The logout confirmation's form ends in a redirect to the validated post-logout URI.
    const returnTo = ctx.oidc?.params?.post_logout_redirect_uri;
    if (returnTo) csp = csp.replace(`form-action ${formActionFor()}`, `form-action ${formActionFor(returnTo)}`);
    ctx.set('content-security-policy', csp);
  });
}
