// The security headers of every HTML page the platform renders itself: a CSP that allows only
// what the page needs and forbids framing, no MIME sniffing, no referrer. Pages name what they
// load; everything else stays at `default-src 'none'`.

export interface PagePolicy {
  /** script-src sources ('none' when unset). */
  script?: string;
  /** style-src sources. */
  style?: string;
  /** img-src sources. */
  img?: string;
  /** connect-src sources (fetches made by the page's scripts). */
  connect?: string;
  /** form-action sources: where the page's forms may post (and redirect after posting). */
  formAction?: string;
}

/** The headers for a page with this policy. */
export function pageSecurityHeaders(policy: PagePolicy): Record<string, string> {
  const directives = [
    "default-src 'none'",
    `script-src ${policy.script ?? "'none'"}`,
    policy.style && `style-src ${policy.style}`,
    policy.img && `img-src ${policy.img}`,
    policy.connect && `connect-src ${policy.connect}`,
    policy.formAction && `form-action ${policy.formAction}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ];
  return {
    'content-security-policy': directives.filter(Boolean).join('; '),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
}
