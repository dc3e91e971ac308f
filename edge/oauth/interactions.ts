// The pages oidc-provider sends the browser to: sign in, sign up (onboarding: account,
// organization, brain, plan), consent with the organization picker, social sign-in, and
// e-mail verification, and accepting an invitation (with a password or a social identity). Every form carries a CSRF token bound to the interaction (or to a
// cookie on the standalone pages). One module per group of routes, in interactions/.
import type { Router } from '../http/router.ts';
import { registerAccountRoutes } from './interactions/account-routes.ts';
import { registerConsentRoutes } from './interactions/consent-routes.ts';
import { registerInvitationRoutes } from './interactions/invitation-routes.ts';
import { registerInvitationSocialRoutes } from './interactions/invitation-social.ts';
import { createInteractionKit, FormError, type InteractionsOptions } from './interactions/kit.ts';
import { registerLoginRoutes } from './interactions/login-routes.ts';
import { createSocial } from './interactions/social-client.ts';
import { registerSocialRoutes } from './interactions/social-routes.ts';

export function registerInteractions(router: Router, options: InteractionsOptions): void {
  const kit = createInteractionKit(options);
  registerLoginRoutes(router, kit);
  registerConsentRoutes(router, kit);
  registerAccountRoutes(router, kit);
  const social = createSocial(kit);
  registerSocialRoutes(router, kit, social);
  registerInvitationRoutes(router, kit);
  registerInvitationSocialRoutes(router, kit, social);
}

// Form errors are the caller's, never a 500: the surface's error handler answers them with a page.
export { FormError, type InteractionsOptions };
